#!/usr/bin/env bash
# The live-query service's fuzz harness: builds fuzz_access (libFuzzer and AddressSanitizer),
# replays every input of corpus/access through its checks, then fuzzes for SECONDS (first
# argument, default 60; 0 only replays) from the corpus into a scratch folder. Inputs that
# take over 2 s fail the run: what a client sends must be refused in linear time.
#   UPDATE_CORPUS=1 bash run.sh 600   # also merge the new inputs into corpus/access
set -euo pipefail
cd "$(dirname "$0")"
RUN_SECONDS=${1:-60}
CONFIGURATION=${FUZZ_CONFIGURATION:-release}
# Coverage is asked for explicitly: -sanitize=fuzzer alone leaves Swift modules uninstrumented.
swift build -c "$CONFIGURATION" --scratch-path ../.build-fuzz --product fuzz_access \
    --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table
harness=../.build-fuzz/$CONFIGURATION/fuzz_access
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
options=(-max_len=8192 -timeout=2 -rss_limit_mb=4096 -print_final_stats=1)
"$harness" "${options[@]}" -runs=0 corpus/access
if [ "$RUN_SECONDS" -gt 0 ]; then
    "$harness" "${options[@]}" -max_total_time="$RUN_SECONDS" "$work" corpus/access
    if [ "${UPDATE_CORPUS:-0}" = 1 ]; then
        "$harness" "${options[@]}" -merge=1 corpus/access "$work"
    fi
fi
