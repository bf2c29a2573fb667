#!/usr/bin/env bash
# Builds every harness into .build-fuzz/: with libFuzzer (NAME), as a plain program that
# replays corpus folders (NAME-replay), or both. C harnesses get ASan + UBSan and the core's
# internal checks; the Swift harnesses get ASan (UBSan is not supported for Swift).
#
#   bash fuzz/build.sh [all|fuzz|replay]     # default all
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case $what in
    all) fuzz=1 replay=1 ;;
    fuzz) fuzz=1 replay=0 ;;
    replay) fuzz=0 replay=1 ;;
    *) echo "usage: fuzz/build.sh [all|fuzz|replay]" >&2; exit 2 ;;
esac
CLANG=${SWIFT_CLANG:-$(dirname "$(readlink -f "$(command -v swift)")")/clang}
OUT=.build-fuzz
mkdir -p "$OUT"
COMMON=(-fuse-ld=lld -g -O1 -std=c11 -Wall -Wextra -DDC_INTERNAL_CHECKS -ICDiffCore/include
        -fsanitize=address,undefined -fno-sanitize-recover=undefined)
# xxHash's header where pkg-config says (fuzz_xxh3 compares the built-in XXH3 with it).
if pkg-config --exists libxxhash 2>/dev/null; then
    read -r -a XXHASH_CFLAGS <<<"$(pkg-config --cflags libxxhash)"
    COMMON+=("${XXHASH_CFLAGS[@]}")
fi

for harness in fuzz/fuzz_*.c; do
    name=$(basename "$harness" .c)
    echo "fuzz/build: $name"
    if [ "$fuzz" = 1 ]; then
        "$CLANG" "${COMMON[@]}" -fsanitize=fuzzer CDiffCore/*.c fuzz/reference_differ.c "$harness" -o "$OUT/$name"
    fi
    if [ "$replay" = 1 ]; then
        "$CLANG" "${COMMON[@]}" CDiffCore/*.c fuzz/reference_differ.c fuzz/replay_main.c "$harness" -o "$OUT/$name-replay"
    fi
done

# The Swift harnesses: the public API and the parsers of untrusted input, with OSS-Fuzz's
# flags and the same command as .clusterfuzzlite/build.sh (see fuzz/swift-flags.sh).
. fuzz/swift-flags.sh
for name in fuzz_swift_api fuzz_csv fuzz_json fuzz_jsonl; do
    echo "fuzz/build: $name"
    if [ "$fuzz" = 1 ]; then
        # shellcheck disable=SC2086 # the flags are word lists
        swift build -c release --package-path fuzz/swift --scratch-path "$PWD/$OUT/swift" \
            --product "$name" --sanitize=fuzzer $OSS_FUZZ_SWIFTFLAGS $SWIFT_COVERAGE
        cp "$OUT/swift/release/$name" "$OUT/$name"
    fi
    if [ "$replay" = 1 ]; then
        swift build -c release --package-path fuzz/swift --scratch-path "$OUT/swift-replay" \
            --product "${name}_replay" --sanitize=address
        cp "$OUT/swift-replay/release/${name}_replay" "$OUT/$name-replay"
    fi
done
