#!/usr/bin/env bash
# Fuzzes each built harness (fuzz/build.sh fuzz) for SECONDS (first argument), starting
# from its committed corpus: libFuzzer runs every corpus input first, so a corpus input that
# fails fails the run. With 0, replays each committed corpus with the plain builds instead
# (fuzz/build.sh replay), no libFuzzer needed. A crash fails the run; libFuzzer prints the
# disagreement, the input in hex and the reproducer's file name to the log.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
OUT=.build-fuzz

harnesses=()
for source in fuzz/fuzz_*.c; do harnesses+=("$(basename "$source" .c)"); done
harnesses+=(fuzz_swift_api fuzz_csv fuzz_json fuzz_jsonl)

# The longest input a harness is fed: JSON documents get room to nest (their committed
# corpus has inputs to 64 KiB, which a shorter limit would cut).
max_len() {
    case $1 in
        fuzz_json) echo 65536 ;;
        *) echo 4096 ;;
    esac
}

for name in "${harnesses[@]}"; do
    if [ "$SECONDS_EACH" -gt 0 ]; then binary="$OUT/$name"; else binary="$OUT/$name-replay"; fi
    if [ ! -x "$binary" ]; then
        echo "fuzz/run: $binary is not built (run fuzz/build.sh)"
        exit 1
    fi
    corpus="fuzz/corpus/${name#fuzz_}"
    mkdir -p "$corpus"
    if [ "$SECONDS_EACH" -gt 0 ]; then
        work=$(mktemp -d)
        echo "fuzz/run: $name for ${SECONDS_EACH}s"
        # New inputs go to a scratch folder: the committed corpus stays small and fixed.
        log="$OUT/$name.log"
        status=0
        # -timeout: an input that takes seconds is a hang (inputs are at most 64 KiB).
        dictionary=()
        if [ -f "fuzz/dictionaries/$name.dict" ]; then dictionary=(-dict="fuzz/dictionaries/$name.dict"); fi
        "$binary" -max_total_time="$SECONDS_EACH" -max_len="$(max_len "$name")" -timeout=10 -print_final_stats=1 "${dictionary[@]}" \
            -artifact_prefix="$OUT/$name-" "$work" "$corpus" >"$log" 2>&1 || status=$?
        grep -E "stat::number_of_executed_units|^Done" "$log" || true
        rm -rf "$work"
        if ! grep -q "INITED cov:" "$log"; then
            echo "fuzz/run: $name has no coverage instrumentation (libFuzzer found no edges); rebuild with fuzz/build.sh"
            exit 1
        fi
        if [ "$status" -ne 0 ]; then
            tail -n 60 "$log"
            echo "fuzz/run: $name found a failure (exit $status); the input and reproducer are above"
            exit 1
        fi
    else
        echo "fuzz/run: replaying $corpus with $name-replay"
        "$binary" "$corpus"
    fi
done
