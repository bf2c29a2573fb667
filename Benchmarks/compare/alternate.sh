#!/usr/bin/env bash
# Two builds of diffbench timed in turn on the same machine: BEFORE AFTER [ROUNDS] [diffbench
# run arguments…]. Each round runs BEFORE then AFTER; the table gives, for every scenario and
# engine, the median over the rounds of each build's median, and AFTER / BEFORE.
# Example (a worktree of the old commit built in /tmp/before):
#   bash Benchmarks/compare/alternate.sh /tmp/before/Benchmarks/.build/release/diffbench \
#        Benchmarks/.build/release/diffbench 3 --engines engine,keypath,differ-keypath
set -euo pipefail
before=$1 after=$2 rounds=${3:-3}
shift $(( $# < 3 ? $# : 3 ))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for round in $(seq 1 "$rounds"); do
    for side in before after; do
        binary=$before
        [ "$side" = after ] && binary=$after
        echo "alternate: round $round of $rounds, $side" >&2
        "$binary" run "$@" --json "$work/$side-$round.json" >/dev/null 2>&1
    done
done
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
medians = {}
for side in ("before", "after"):
    for r in range(1, rounds + 1):
        for m in json.load(open(f"{work}/{side}-{r}.json")):
            if m.get("status") != "ok":
                continue
            medians.setdefault((m["scenario"], m["engine"]), {}).setdefault(side, []).append(m["medianMilliseconds"])
print(f"{'scenario':28} {'engine':24} {'before ms':>10} {'after ms':>10} {'after/before':>13}")
for (scenario, engine), sides in medians.items():
    if "before" not in sides or "after" not in sides:
        continue
    b, a = statistics.median(sides["before"]), statistics.median(sides["after"])
    print(f"{scenario:28} {engine:24} {b:10.4f} {a:10.4f} {a / b:13.3f}")
PY
