#!/usr/bin/env bash
# Instructions one diff executes, in two builds of diffbench: BEFORE AFTER [SCENARIOS] [ENGINES].
# Unlike seconds, instruction counts do not move with a process's memory layout, so a few
# percent between builds can be read on a noisy host. Each scenario and engine runs under
# callgrind with --runs 1 and --runs 5: both do the same setup, checks and warm-up, so the
# difference over four is one diff. Build each diffbench with
#   swift build -c release --product diffbench -Xswiftc -dwarf-version=4 -Xcc -gdwarf-4
# (valgrind 3.19 cannot read DWARF 5). Pairs an engine cannot run are left out.
# Example:
#   bash Benchmarks/compare/instructions.sh /tmp/before/diffbench Benchmarks/.build/release/diffbench \
#        rows-5k,rows-100k engine,keypath,flat
set -euo pipefail
before=$1 after=$2
scenarios=${3:-uuid-5k,uuid-100k,rows-5k,rows-100k,nochange-100k,allnew-100k,alldeleted-100k,duplicates-100k,strings-100k,records-100k,records-nochange-100k,bytes-100k,sections-100k}
engines=${4:-engine,engine-displaced,engine-none,keypath,flat,staged,oneshot-identifiable}
command -v valgrind >/dev/null || { echo "instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for side in before after; do
    binary=$before
    [ "$side" = after ] && binary=$after
    for scenario in ${scenarios//,/ }; do
        for engine in ${engines//,/ }; do
            for runs in 1 5; do
                name="$work/$side $scenario $engine $runs"
                # Swift's per-process hash seed would move the counts of hashing code.
                SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
                    "$binary" run --scenario "$scenario" --engines "$engine" --runs "$runs" \
                    --json "$name.json" >"$name.log" 2>&1
            done
        done
    done
    echo "instructions: $side done" >&2
done

python3 - "$work" "$scenarios" "$engines" <<'PY'
import json, re, sys
work, scenarios, engines = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")

def count(side, scenario, engine, runs):
    name = f"{work}/{side} {scenario} {engine} {runs}"
    answers = [m for m in json.load(open(name + ".json")) if m["scenario"] == scenario and m["engine"] == engine]
    if not answers or answers[0]["status"] != "ok":
        return None
    return int(re.search(r"Collected : (\d+)", open(name + ".log").read()).group(1))

print("| scenario | engine | before (M instructions) | after | after / before |")
print("| --- | --- | ---: | ---: | ---: |")
for scenario in scenarios:
    for engine in engines:
        per_diff = {}
        for side in ("before", "after"):
            one, five = count(side, scenario, engine, 1), count(side, scenario, engine, 5)
            per_diff[side] = None if one is None or five is None else (five - one) / 4
        if None in per_diff.values():
            continue
        before, after = per_diff["before"], per_diff["after"]
        print(f"| `{scenario}` | `{engine}` | {before / 1e6:,.3f} | {after / 1e6:,.3f} | {after / before:.3f} |")
PY
