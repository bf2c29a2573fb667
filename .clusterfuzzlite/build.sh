#!/bin/bash -eu
# Builds every harness into $OUT under the OSS-Fuzz build contract: the C harnesses with
# $CC $CFLAGS and $LIB_FUZZING_ENGINE, the Swift harnesses with the flags the Swift builder's
# precompile_swift exports, and each harness's committed corpus as NAME_seed_corpus.zip.
# Run here as CI does (fuzz/clusterfuzzlite-check.sh sets the variables the way the base
# builder does, with this machine's toolchain).
# The physical path: the local check (fuzz/clusterfuzzlite-check.sh) reaches the repository
# through a symbolic link, and its Swift builds share a scratch folder with builds made from
# the repository itself, which must see the same package paths.
cd -P "${SRC:?}/diffengine"

# --- C: the core against its naive reference, and the built-in XXH3 ---
CORE_FLAGS=(-std=c11 -DDC_INTERNAL_CHECKS -ICDiffCore/include)
if pkg-config --exists libxxhash 2>/dev/null; then
    read -r -a XXHASH_CFLAGS <<<"$(pkg-config --cflags libxxhash)"
    CORE_FLAGS+=("${XXHASH_CFLAGS[@]}")
fi
for harness in fuzz/fuzz_*.c; do
    name=$(basename "$harness" .c)
    # shellcheck disable=SC2086 # CFLAGS and LIB_FUZZING_ENGINE are word lists by contract.
    $CC $CFLAGS "${CORE_FLAGS[@]}" CDiffCore/*.c fuzz/reference_differ.c "$harness" \
        $LIB_FUZZING_ENGINE -o "$OUT/$name"
done

# --- Swift: the public API and the CSV, JSON and JSON Lines readers ---
if command -v precompile_swift >/dev/null 2>&1; then
    # shellcheck disable=SC1090
    . "$(command -v precompile_swift)"
fi
: "${SWIFTFLAGS:?precompile_swift (or the caller) must set SWIFTFLAGS}"
# SWIFT_COVERAGE: the coverage the harnesses ask for on top (why: fuzz/swift-flags.sh).
. fuzz/swift-flags.sh
for name in fuzz_swift_api fuzz_csv fuzz_json fuzz_jsonl; do
    # shellcheck disable=SC2086
    swift build -c release --package-path fuzz/swift --scratch-path "$WORK/swift" \
        --product "$name" --sanitize=fuzzer $SWIFTFLAGS $SWIFT_COVERAGE
    cp "$WORK/swift/release/$name" "$OUT/$name"
done

# --- Dictionaries (OSS-Fuzz passes $OUT/NAME.dict to NAME) ---
cp -L fuzz/dictionaries/*.dict "$OUT/"

# --- Seed corpora ---
for name in fuzz_core fuzz_xxh3 fuzz_swift_api fuzz_csv fuzz_json fuzz_jsonl; do
    corpus="fuzz/corpus/${name#fuzz_}"
    if [ -d "$corpus" ] && [ -n "$(ls -A "$corpus")" ]; then
        (cd "$corpus" && zip -q -r "$OUT/${name}_seed_corpus.zip" .)
    fi
done
