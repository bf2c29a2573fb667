#!/usr/bin/env bash
# Type-checks each file of scripts/compile-checks against the built DiffEngine module:
# NAME.swift must compile; NAME.fail.swift must fail with the message its first line names
# ("// must fail with: MESSAGE"). Compile-time facts stay compile-time facts. Then every
# package manifest quoted in the README and the documentation (a Swift block importing
# PackageDescription) must type-check against the toolchain's PackageDescription; the
# other quoted blocks are checked by DocumentationSnippetTests.
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
toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python3 - "$scratch" README.md Sources/DiffEngine/DiffEngine.docc/*.md <<'PY'
import re, sys
out, files = sys.argv[1], sys.argv[2:]
for f in files:
    for k, block in enumerate(re.findall(r"```swift\n(.*?)```", open(f).read(), re.S)):
        if "import PackageDescription" in block:
            name = f.replace("/", "_") + "-%d.swift" % k
            open(out + "/" + name, "w").write(block)
PY
for manifest in "$scratch"/*.swift; do
    [ -e "$manifest" ] || continue
    if swiftc -typecheck -I "$toolchain/lib/swift/pm/ManifestAPI" -Xfrontend -package-description-version \
        -Xfrontend 6.0.0 "$manifest" >/dev/null 2>&1; then
        echo "check-compile: the manifest quoted in $(basename "$manifest" .swift) type-checks"
    else
        echo "check-compile: the manifest quoted in $(basename "$manifest" .swift) does not type-check"; status=1
    fi
done
exit $status
