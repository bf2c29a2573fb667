#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh here, with the variables set the way OSS-Fuzz's base
# builder sets them for libFuzzer + AddressSanitizer (and SWIFTFLAGS as its precompile_swift
# exports them), with this machine's toolchain; then checks that every harness and seed
# corpus landed in $OUT and that each harness runs its seed corpus without a failure, under
# the sanitizer options and limits of OSS-Fuzz's base runner.
set -euo pipefail
cd "$(dirname "$0")/.."
# The base builder has zip; a fresh machine of this kind may not.
if ! command -v zip >/dev/null 2>&1 || ! command -v unzip >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq zip unzip >/dev/null
fi
CLANG=${SWIFT_CLANG:-$(dirname "$(readlink -f "$(command -v swift)")")/clang}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/src" "$scratch/out" "$scratch/work"
ln -s "$PWD" "$scratch/src/diffengine"

# The Swift harnesses' scratch folder is fuzz/build.sh's: whichever of the two builds them
# first, the other finds them built (fuzz/swift-flags.sh).
export SRC="$scratch/src" OUT="$scratch/out" WORK="${CFLITE_WORK:-$PWD/.build-fuzz}"
export CC="$CLANG" CXX="$CLANG++" SANITIZER=address FUZZING_ENGINE=libfuzzer ARCHITECTURE=x86_64
export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS" LIB_FUZZING_ENGINE="-fsanitize=fuzzer"
. fuzz/swift-flags.sh
export SWIFTFLAGS="$OSS_FUZZ_SWIFTFLAGS"
mkdir -p "$WORK"
bash .clusterfuzzlite/build.sh

# The harnesses run as OSS-Fuzz's base runner runs them: its sanitizer options (leak check on,
# a 10 MB quarantine: with ASan's default 256 MB, each leak check walks far more freed memory,
# and fuzz_swift_api took 134 s on its seeds instead of 83 s) and its libFuzzer limits.
export ASAN_OPTIONS="alloc_dealloc_mismatch=0:allocator_may_return_null=1:allocator_release_to_os_interval_ms=500:check_malloc_usable_size=0:detect_container_overflow=1:detect_odr_violation=0:detect_leaks=1:detect_stack_use_after_return=1:fast_unwind_on_fatal=0:handle_abort=1:handle_segv=1:handle_sigill=1:max_uar_stack_size_log=16:print_scariness=1:quarantine_size_mb=10:strict_memcmp=1:symbolize=1:use_sigaltstack=1:dedup_token_length=3"
export UBSAN_OPTIONS="print_stacktrace=1:print_summary=1:silence_unsigned_overflow=1:symbolize=1:dedup_token_length=3"
RUNNER_LIMITS=(-rss_limit_mb=2560 -timeout=25)

# Each harness on its seeds, as many at a time as there are cores (fuzz_swift_api, the
# slowest, first): a harness's lines print when it is done.
check_seeds() {
    local name=$1 seeds="$scratch/seeds-$1" dictionary=()
    if [ ! -x "$OUT/$name" ] || [ ! -f "$OUT/${name}_seed_corpus.zip" ]; then
        echo "clusterfuzzlite-check: $name or its seed corpus is missing from \$OUT"
        return 1
    fi
    mkdir -p "$seeds"
    (cd "$seeds" && unzip -q "$OUT/${name}_seed_corpus.zip")
    if [ -f "$OUT/$name.dict" ]; then dictionary=(-dict="$OUT/$name.dict"); fi
    if ! "$OUT/$name" -runs=0 "${RUNNER_LIMITS[@]}" "${dictionary[@]}" "$seeds" >"$scratch/$name.log" 2>&1; then
        echo "clusterfuzzlite-check: $name failed on its seed corpus:"
        tail -20 "$scratch/$name.log"
        return 1
    fi
    echo "clusterfuzzlite-check: $name built and ran its $(ls "$seeds" | wc -l) seeds"
}

. fuzz/lanes.sh
in_lanes "$(nproc)" check_seeds fuzz_swift_api fuzz_core fuzz_xxh3 fuzz_csv fuzz_json fuzz_jsonl
