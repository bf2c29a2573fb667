#!/usr/bin/env bash
# Fuzzes each built harness for SECONDS (first argument; 0 skips fuzzing), then replays
# its committed corpus with the plain build. A crash fails the run; libFuzzer prints the
# disagreement, the input in hex and the reproducer's file name to the log.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
OUT=.build-fuzz

harnesses=()
for source in fuzz/fuzz_*.c; do harnesses+=("$(basename "$source" .c)"); done
harnesses+=(fuzz_swift_api fuzz_csv fuzz_json fuzz_jsonl)

for name in "${harnesses[@]}"; do
    binary="$OUT/$name"
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
        # -timeout: an input that takes seconds is a hang (inputs are at most 4 KB).
        dictionary=()
        if [ -f "fuzz/dictionaries/$name.dict" ]; then dictionary=(-dict="fuzz/dictionaries/$name.dict"); fi
        "$binary" -max_total_time="$SECONDS_EACH" -max_len=4096 -timeout=10 -print_final_stats=1 "${dictionary[@]}" \
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
    fi
    echo "fuzz/run: replaying $corpus with $name-replay"
    "$OUT/$name-replay" "$corpus"
done
