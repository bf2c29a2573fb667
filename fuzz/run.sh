#!/usr/bin/env bash
# Fuzzes each built harness (fuzz/build.sh fuzz) for SECONDS (first argument), starting
# from its committed corpus: libFuzzer runs every corpus input first, so a corpus input that
# fails fails the run. With 0, replays each committed corpus with the plain builds instead
# (fuzz/build.sh replay), no libFuzzer needed. A crash fails the run; libFuzzer prints the
# disagreement, the input in hex and the reproducer's file name to the log.
#
# FUZZ_HARNESSES (default: every harness): which harnesses, by name, separated by spaces.
# FUZZ_JOBS (default: the number of cores): harnesses fuzzed at a time, each on one core.
# FUZZ_DETECT_LEAKS (default 1): 0 turns off libFuzzer's leak check, which costs the Swift
# harnesses most of their corpus run (LeakSanitizer scans memory whenever an input allocates
# more than it frees, as the Swift runtime's caches do); CI's smoke turns it off because
# `make cflite-check` runs every seed again with it on.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
JOBS=${FUZZ_JOBS:-$(nproc)}
DETECT_LEAKS=${FUZZ_DETECT_LEAKS:-1}
OUT=.build-fuzz

# The slowest first (fuzz_swift_api's corpus run is the longest), so that the lanes end together.
harnesses=(fuzz_swift_api)
for source in fuzz/fuzz_*.c; do harnesses+=("$(basename "$source" .c)"); done
harnesses+=(fuzz_json fuzz_jsonl fuzz_csv)
if [ -n "${FUZZ_HARNESSES:-}" ]; then read -r -a harnesses <<<"$FUZZ_HARNESSES"; fi

# The longest input a harness is fed: JSON documents get room to nest (their committed
# corpus has inputs to 64 KiB, which a shorter limit would cut).
max_len() {
    case $1 in
        fuzz_json) echo 65536 ;;
        *) echo 4096 ;;
    esac
}

# Fuzzes one harness; prints its summary when done (lanes may interleave their lines).
fuzz_one() {
    local name=$1 binary="$OUT/$1" corpus="fuzz/corpus/${1#fuzz_}" work log status=0 dictionary=()
    mkdir -p "$corpus"
    # New inputs go to a scratch folder: the committed corpus stays small and fixed.
    work=$(mktemp -d)
    log="$OUT/$name.log"
    if [ -f "fuzz/dictionaries/$name.dict" ]; then dictionary=(-dict="fuzz/dictionaries/$name.dict"); fi
    # -timeout: an input that takes seconds is a hang (inputs are at most 64 KiB).
    "$binary" -max_total_time="$SECONDS_EACH" -max_len="$(max_len "$name")" -timeout=10 -print_final_stats=1 \
        -detect_leaks="$DETECT_LEAKS" "${dictionary[@]}" -artifact_prefix="$OUT/$name-" "$work" "$corpus" >"$log" 2>&1 || status=$?
    rm -rf "$work"
    if ! grep -q "INITED cov:" "$log"; then
        echo "fuzz/run: $name has no coverage instrumentation (libFuzzer found no edges); rebuild with fuzz/build.sh"
        return 1
    fi
    if [ "$status" -ne 0 ]; then
        tail -n 60 "$log"
        echo "fuzz/run: $name found a failure (exit $status); the input and reproducer are above"
        return 1
    fi
    echo "fuzz/run: $name fuzzed ${SECONDS_EACH}s: $(grep -E "stat::number_of_executed_units" "$log" | tr -s ' ')"
}

for name in "${harnesses[@]}"; do
    if [ "$SECONDS_EACH" -gt 0 ]; then binary="$OUT/$name"; else binary="$OUT/$name-replay"; fi
    if [ ! -x "$binary" ]; then
        echo "fuzz/run: $binary is not built (run fuzz/build.sh)"
        exit 1
    fi
done

if [ "$SECONDS_EACH" -eq 0 ]; then
    for name in "${harnesses[@]}"; do
        corpus="fuzz/corpus/${name#fuzz_}"
        mkdir -p "$corpus"
        echo "fuzz/run: replaying $corpus with $name-replay"
        "$OUT/$name-replay" "$corpus"
    done
    exit 0
fi

echo "fuzz/run: ${#harnesses[@]} harnesses, ${SECONDS_EACH}s each, $JOBS at a time"
. fuzz/lanes.sh
in_lanes "$JOBS" fuzz_one "${harnesses[@]}"
