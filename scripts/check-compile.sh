#!/usr/bin/env bash
# Type-checks each file of scripts/compile-checks against the built DiffEngine module:
# NAME.swift must compile; NAME.fail.swift must fail with the message its first line names
# ("// must fail with: MESSAGE"). Compile-time facts stay compile-time facts.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --target DiffEngine >/dev/null
modules=$(swift build --show-bin-path)/Modules
status=0
for check in scripts/compile-checks/*.swift; do
    output=$(swiftc -typecheck -I "$modules" -I CDiffCore/include "$check" 2>&1) && compiled=1 || compiled=0
    case "$check" in
    *.fail.swift)
        expected=$(head -n 1 "$check" | sed -n 's|^// must fail with: ||p')
        if [ "$compiled" = 1 ]; then
            echo "check-compile: $check compiled, but must fail"; status=1
        elif ! grep -qF "$expected" <<<"$output"; then
            echo "check-compile: $check failed without '$expected':"; echo "$output" | head -n 5; status=1
        else
            echo "check-compile: $check fails as it must"
        fi ;;
    *)
        if [ "$compiled" = 0 ]; then
            echo "check-compile: $check must compile:"; echo "$output" | head -n 10; status=1
        else
            echo "check-compile: $check compiles"
        fi ;;
    esac
done
exit $status
