#!/usr/bin/env bash
# diffengine beside the tools a data engineer would otherwise use to diff two table exports
# by key, on one generated pair of CSV files, or JSON Lines files with FORMAT=jsonl (ROWS
# rows a side, 1,000,000 by default; the columns of `diffbench files`): DuckDB and polars (a full outer join on the key, every
# other column compared null-aware, all values read as text), and at up to 50,000 rows
# csv-diff and daff. Each tool reports its deleted / inserted / updated counts, which must
# agree, and its time: RUNS runs (3 by default), taken in turn, median and fastest.
#
# Two outputs each: the counts alone, and the changed rows as JSON Lines (diffengine
# `--format jsonl`; DuckDB `COPY … (FORMAT json)`; polars `write_ndjson`). Every tool
# compares the files as keyed sets of rows (diffengine `--ignore-order`, daff `--unordered`;
# the others always do). diffengine's time is its process's wall time; DuckDB's and
# polars' are taken inside Python from reading the files to the last byte written (the
# interpreter's start and the import are left out). Python packages come from PyPI into a
# scratch venv under WORK; nothing is vendored.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-3}
FORMAT=${FORMAT:-csv}
WORK=${WORK:-.build/compare}
VENV="$WORK/venv"
SMALL=$(( ROWS <= 50000 ))
[ "$FORMAT" = csv ] || SMALL=0 # csv-diff and daff read CSV only
mkdir -p "$WORK"
wanted="duckdb polars"
[ "$SMALL" = 1 ] && wanted="$wanted csv-diff daff"
missing=""
for package in $wanted; do
    "$VENV/bin/python" -c "import importlib.metadata as m; m.version('$package')" 2>/dev/null || missing="$missing $package"
done
if [ -n "$missing" ]; then
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet $missing
fi
version() { "$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))"; }

# diffbench writes the files (and times diffengine on them once, checking its answer).
swift build -c release --package-path Benchmarks --product diffbench >/dev/null
swift build -c release --package-path Benchmarks --product diffengine >/dev/null
ENGINE=Benchmarks/.build/release/diffengine
Benchmarks/.build/release/diffbench files --rows "$ROWS" --runs 1 --directory "$WORK/files" >/dev/null
OLD="$WORK/files/old.$FORMAT" NEW="$WORK/files/new.$FORMAT"

# Each run of a tool appends "tool<TAB>output<TAB>seconds<TAB>deleted inserted updated" to $TIMES.
TIMES="$WORK/times.tsv"
: >"$TIMES"
measure() { # TOOL OUTPUT FILE COMMAND…: the command's wall time and counts (stdout to FILE)
    local tool=$1 output=$2 file=$3 start end status=0
    shift 3
    start=$(date +%s.%N)
    "$@" >"$file" 2>/dev/null || status=$?
    end=$(date +%s.%N)
    # diffengine exits 1 when the files differ; csv-diff and daff exit 0 or 1 as well.
    [ "$status" -le 1 ] || { echo "compare: $tool failed with status $status" >&2; exit 1; }
    printf '%s\t%s\t%s\t%s\n' "$tool" "$output" "$(python3 -c "print($end - $start)")" "$(counts "$tool" "$file")" >>"$TIMES"
}
counts() { # TOOL FILE: "deleted inserted updated" from a tool's output
    python3 - "$1" "$2" <<'PY'
import csv, json, re, sys
tool, path = sys.argv[1:]
if tool.startswith("diffengine") and path.endswith(".jsonl"):
    kinds = [json.loads(line)["change"] for line in open(path)]
    print(kinds.count("deleted"), kinds.count("inserted"), kinds.count("updated"))
elif tool.startswith("diffengine"):
    text = open(path).read()
    print(*(re.search(rf"(\d+) {kind}", text).group(1) for kind in ("deleted", "inserted", "updated")))
elif tool.startswith("csv-diff"):
    d = json.load(open(path))
    print(len(d["removed"]), len(d["added"]), len(d["changed"]))
else:  # daff: a mark column, --- deleted, +++ inserted, -> updated
    marks = [row[0] for row in csv.reader(open(path, newline=""))]
    print(marks.count("---"), marks.count("+++"), sum(1 for mark in marks if "->" in mark))
PY
}
frame() { # TOOL MODE OUTPUT: one run of DuckDB or polars, timed inside Python
    local result
    result=$("$VENV/bin/python" Benchmarks/compare/dataframe_diff.py "$1" "$2" "$OLD" "$NEW" "$WORK/$1-$2.out")
    python3 - "$1 $(version "$1")" "$3" "$result" >>"$TIMES" <<'PY'
import json, sys
tool, output, result = sys.argv[1:]
r = json.loads(result); c = r["counts"]
print(f"{tool}\t{output}\t{r['seconds']}\t{c['deleted']} {c['inserted']} {c['updated']}")
PY
}

for run in $(seq 1 "$RUNS"); do
    echo "compare: run $run of $RUNS" >&2
    measure "diffengine --ignore-order" counts "$WORK/diffengine.txt" "$ENGINE" "$OLD" "$NEW" --key id --ignore-order --format summary
    measure "diffengine --ignore-order" "changed rows" "$WORK/diffengine.jsonl" "$ENGINE" "$OLD" "$NEW" --key id --ignore-order --format jsonl
    frame duckdb counts counts
    frame duckdb rows "changed rows"
    frame polars counts counts
    frame polars rows "changed rows"
    if [ "$SMALL" = 1 ]; then
        measure "csv-diff $(version csv-diff)" "changed rows" "$WORK/csv-diff.json" "$VENV/bin/csv-diff" "$OLD" "$NEW" --key=id --json
        measure "daff $(version daff) --unordered" "changed rows" "$WORK/daff.csv" "$VENV/bin/daff" diff --unordered --context 0 --no-color --id id "$OLD" "$NEW"
    fi
done

python3 - "$TIMES" "$ROWS" "$RUNS" <<'PY'
import statistics, sys
path, rows, runs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
results = {}
for line in open(path):
    tool, output, seconds, counts = line.rstrip("\n").split("\t")
    entry = results.setdefault((tool, output), {"times": [], "counts": set()})
    entry["times"].append(float(seconds))
    entry["counts"].add(counts)
print(f"{rows:,} rows a side, {runs} runs each in turn; seconds")
print("\n| tool | output | deleted | inserted | updated | median s | fastest s |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
answers = set()
for (tool, output), entry in results.items():
    answers |= entry["counts"]
    deleted, inserted, updated = sorted(entry["counts"])[0].split()
    print(f"| {tool} | {output} | {int(deleted):,} | {int(inserted):,} | {int(updated):,} "
          f"| {statistics.median(entry['times']):.2f} | {min(entry['times']):.2f} |")
if len(answers) != 1:
    sys.exit(f"compare: the tools disagree: {sorted(answers)}")
PY
