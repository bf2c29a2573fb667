#!/usr/bin/env bash
# diffengine beside csv-diff and daff on one generated pair of CSV files (ROWS rows, 20,000
# by default): the deleted / inserted / updated counts each tool reports, and its wall time.
# csv-diff and daff come from PyPI into a scratch venv under WORK; nothing is vendored.
# Every tool compares the files as keyed sets of rows (diffengine --ignore-order, daff
# --unordered; csv-diff always does).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS=${ROWS:-20000}
WORK=${WORK:-.build/compare}
VENV="$WORK/venv"
mkdir -p "$WORK"
if [ ! -x "$VENV/bin/csv-diff" ] || [ ! -x "$VENV/bin/daff" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet csv-diff daff
fi
swift build -c release --package-path Benchmarks >/dev/null
swift build -c release --package-path Benchmarks --product diffengine >/dev/null
BIN=Benchmarks/.build/release
"$BIN/diffbench" files --rows "$ROWS" --runs 1 --directory "$WORK/files" >/dev/null 2>&1
OLD="$WORK/files/old.csv" NEW="$WORK/files/new.csv"

seconds() { # runs "$@" with stdout to $OUT; prints the wall time
    local start end
    start=$(date +%s.%N)
    "$@" >"$OUT" 2>/dev/null || true
    end=$(date +%s.%N)
    python3 -c "print(f'{$end - $start:.2f}')"
}

OUT="$WORK/diffengine.json"
t_engine=$(seconds "$BIN/diffengine" "$OLD" "$NEW" --key id --ignore-order --format json)
engine=$(python3 -c "import json; c = json.load(open('$OUT'))['counts']; print(c['deleted'], c['inserted'], c['updated'])")

OUT="$WORK/csv-diff.json"
t_csvdiff=$(seconds "$VENV/bin/csv-diff" "$OLD" "$NEW" --key=id --json)
csvdiff=$(python3 -c "import json; d = json.load(open('$OUT')); print(len(d['removed']), len(d['added']), len(d['changed']))")

OUT="$WORK/daff.csv"
t_daff=$(seconds "$VENV/bin/daff" diff --unordered --context 0 --no-color --id id "$OLD" "$NEW")
daff=$(python3 - "$OUT" <<'PY'
import csv, sys
marks = [row[0] for row in csv.reader(open(sys.argv[1], newline=''))]
print(marks.count('---'), marks.count('+++'), sum(1 for mark in marks if '->' in mark))
PY
)

printf '| tool | deleted | inserted | updated | wall s |\n| --- | ---: | ---: | ---: | ---: |\n'
for row in "diffengine --ignore-order:$engine:$t_engine" "csv-diff $("$VENV/bin/pip" show csv-diff | sed -n 's/^Version: //p'):$csvdiff:$t_csvdiff" "daff $("$VENV/bin/pip" show daff | sed -n 's/^Version: //p') --unordered:$daff:$t_daff"; do
    IFS=: read -r name counts time <<<"$row"
    read -r deleted inserted updated <<<"$counts"
    printf '| %s | %s | %s | %s | %s |\n' "$name" "$deleted" "$inserted" "$updated" "$time"
done
if [ "$engine" != "$csvdiff" ] || [ "$engine" != "$daff" ]; then
    echo "compare: the tools disagree" >&2
    exit 1
fi
