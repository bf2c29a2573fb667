#!/usr/bin/env bash
# A fuzzing campaign: every harness in turn, on both cores, for its share of HOURS (first
# argument, default 1), from the committed corpus into a scratch corpus; then the scratch
# corpus is merged into a minimal set and one line per harness goes to fuzz/campaign.log:
# date, commit, harness, executions, seconds, coverage at start and end, failures.
#
# The campaign builds keep every check of the CI builds but ASan (UBSan and the core's
# internal checks in C at -O2; libFuzzer's own checks in Swift): several times the
# executions a second. ASan runs stay in CI's smoke runs (fuzz/run.sh).
#
#   bash fuzz/campaign.sh 8                  # 8 hours
#   UPDATE_CORPUS=1 bash fuzz/campaign.sh 1  # also copy the minimised new inputs into fuzz/corpus
#
# Environment: FUZZ_WORK (scratch folder, default /tmp/diffengine-fuzz), FUZZ_CORES (2),
# FUZZ_HARNESSES (which harnesses, all six by default), FUZZ_SECONDS (each harness runs this
# long instead of its share of HOURS).
set -euo pipefail
cd "$(dirname "$0")/.."
HOURS=${1:-1}
WORK=${FUZZ_WORK:-/tmp/diffengine-fuzz}
CORES=${FUZZ_CORES:-2}
CLANG=${SWIFT_CLANG:-$(dirname "$(readlink -f "$(command -v swift)")")/clang}
BUILD=.build-campaign
LOG=fuzz/campaign.log
mkdir -p "$BUILD" "$WORK"
commit=$(git rev-parse --short HEAD)

echo "fuzz/campaign: building the campaign harnesses into $BUILD"
CFLAGS=(-g -O2 -std=c11 -DDC_INTERNAL_CHECKS -ICDiffCore/include -fsanitize=fuzzer,undefined -fno-sanitize-recover=undefined)
HAS_XXHASH=0
if pkg-config --exists libxxhash 2>/dev/null; then
    HAS_XXHASH=1
    read -r -a XXHASH_CFLAGS <<<"$(pkg-config --cflags libxxhash)"
    CFLAGS+=("${XXHASH_CFLAGS[@]}")
fi
# Only the core is instrumented for coverage: the harness and the naive reference keep UBSan
# but guide nothing, and their coverage callbacks cost a third of the executions (measured:
# fuzz_core 3,961 -> 5,794 a second on one core). The core has edge coverage without
# comparison tracing: its comparisons are of keys hashed from the input, which the fuzzer
# cannot steer, and tracing them took two thirds of each execution (fuzz_core 3,443 ->
# 14,467 a second, the same coverage). CI's smoke runs keep comparison tracing and ASan.
PLAIN=("${CFLAGS[@]/-fsanitize=fuzzer,undefined/-fsanitize=undefined}")
GUIDED=("${CFLAGS[@]/-fsanitize=fuzzer,undefined/-fsanitize=fuzzer-no-link,undefined}")
GUIDED+=(-fno-sanitize-coverage=trace-cmp)
mkdir -p "$BUILD/core"
for source in CDiffCore/*.c; do
    "$CLANG" "${GUIDED[@]}" -c "$source" -o "$BUILD/core/$(basename "$source" .c).o"
done
"$CLANG" "${PLAIN[@]}" -c fuzz/reference_differ.c -o "$BUILD/reference_differ.o"
for harness in fuzz/fuzz_*.c; do
    name=$(basename "$harness" .c)
    # fuzz_xxh3 compares the built-in XXH3 with the system's; without it, it cannot be built.
    if [ "$name" = fuzz_xxh3 ] && [ "$HAS_XXHASH" = 0 ]; then continue; fi
    "$CLANG" "${PLAIN[@]}" -c "$harness" -o "$BUILD/$name.o"
    "$CLANG" -fuse-ld=lld "${CFLAGS[@]}" "$BUILD"/core/*.o "$BUILD/reference_differ.o" "$BUILD/$name.o" -o "$BUILD/$name"
done
# The Swift harnesses likewise without comparison tracing, in Swift and in the C core
# (fuzz_swift_api: 508 -> 1,482 a second, the same coverage).
SWIFT_COVERAGE=-sanitize-coverage=edge,inline-8bit-counters,pc-table
for name in fuzz_swift_api fuzz_csv fuzz_json fuzz_jsonl; do
    swift build -c release --package-path fuzz/swift --scratch-path "$BUILD/swift" \
        --product "$name" --sanitize=fuzzer -Xswiftc "$SWIFT_COVERAGE" -Xcc -fno-sanitize-coverage=trace-cmp >/dev/null
    cp "$BUILD/swift/release/$name" "$BUILD/$name"
done

# Shares of the time: the two differential harnesses get most of it.
share() {
    case $1 in
        fuzz_core) echo 40 ;;
        fuzz_swift_api) echo 30 ;;
        *) echo 7 ;; # fuzz_xxh3 and the three parsers (7.5 rounded down)
    esac
}
max_len() {
    case $1 in
        fuzz_core) echo 512 ;;
        fuzz_json) echo 65536 ;;
        *) echo 4096 ;;
    esac
}

status=0
for name in ${FUZZ_HARNESSES:-fuzz_core fuzz_swift_api fuzz_xxh3 fuzz_csv fuzz_json fuzz_jsonl}; do
    if [ ! -x "$BUILD/$name" ]; then
        echo "fuzz/campaign: $name is not built (fuzz_xxh3 needs the system xxHash: libxxhash-dev and pkg-config)"
        status=1
        continue
    fi
    seconds=${FUZZ_SECONDS:-$(python3 -c "print(max(60, int($HOURS * 3600 * $(share "$name") / 100)))")}
    found="$WORK/$name"
    mkdir -p "$found"
    echo "fuzz/campaign: $name for ${seconds}s on $CORES cores"
    run_log="$WORK/$name.log"
    started=$(date +%s)
    harness_status=0
    # One core runs libFuzzer in process: its fork mode restarts a job every few seconds
    # and reloads part of the corpus each time (fuzz_core: 9,452 vs 14,467 a second).
    options=(-fork="$CORES")
    if [ "$CORES" = 1 ]; then options=(-print_final_stats=1); fi
    if [ -f "fuzz/dictionaries/$name.dict" ]; then options+=(-dict="fuzz/dictionaries/$name.dict"); fi
    "$BUILD/$name" "${options[@]}" -max_total_time="$seconds" -max_len="$(max_len "$name")" -timeout=10 \
        -artifact_prefix="$WORK/$name-" "$found" "fuzz/corpus/${name#fuzz_}" >"$run_log" 2>&1 || harness_status=$?
    elapsed=$(( $(date +%s) - started ))
    # The fork mode's status lines: "#EXECUTIONS: cov: C ft: F corp: … exec/s: … crash: N …";
    # in process: "#EXECUTIONS<TAB>INITED|pulse|NEW|DONE cov: C ft: F …" (a failure ends the run
    # with a non-zero status).
    summary=$(python3 - "$run_log" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1], errors="replace") if re.match(r"#\d+(:|\s+[A-Z]+|\s+pulse) +cov:", l)]
def field(line, name):
    match = re.search(name + r": (\d+)", line)
    return int(match.group(1)) if match else 0
if not lines:
    print("0 0 0 0")
else:
    first, last = lines[0], lines[-1]
    failed = re.search(r"oom/timeout/crash: (\d+)/(\d+)/(\d+)", last)
    failures = sum(int(count) for count in failed.groups()) if failed else 0
    print(int(re.match(r"#(\d+)", last).group(1)), field(first, "cov"), field(last, "cov"), failures)
PY
)
    read -r executions cov_start cov_end failures <<<"$summary"
    artifacts=$( (ls "$WORK/$name"-crash-* "$WORK/$name"-timeout-* "$WORK/$name"-oom-* 2>/dev/null || true) | wc -l)
    if [ "$harness_status" -ne 0 ] && [ "$failures" -eq 0 ]; then failures=1; fi
    line="$(date -u +%Y-%m-%dT%H:%MZ) $commit $name executions=$executions seconds=$elapsed cov=$cov_start->$cov_end failures=$failures"
    echo "$line" | tee -a "$LOG"
    if [ "$failures" -ne 0 ] || [ "$harness_status" -ne 0 ]; then
        tail -n 40 "$run_log"
        echo "fuzz/campaign: $name failed; reproducers: $WORK/$name-* ($artifacts)"
        status=1
    fi
    # The new inputs, minimised against the committed corpus.
    minimal="$WORK/$name-minimal"
    rm -rf "$minimal" && mkdir -p "$minimal"
    "$BUILD/$name" -merge=1 -max_len="$(max_len "$name")" "$minimal" "fuzz/corpus/${name#fuzz_}" "$found" >/dev/null 2>&1 || true
    fresh=0
    for input in "$minimal"/*; do
        [ -e "$input" ] || continue
        if [ ! -e "fuzz/corpus/${name#fuzz_}/$(basename "$input")" ]; then
            fresh=$((fresh + 1))
            if [ "${UPDATE_CORPUS:-0}" = 1 ]; then cp "$input" "fuzz/corpus/${name#fuzz_}/"; fi
        fi
    done
    echo "fuzz/campaign: $name: $fresh new inputs in the minimised corpus ($minimal)"
done
exit "$status"
