"""Both engines, with and without checksums, give the single-process CLI's answers.

The reference is `diffengine --ignore-order --unchanged --whole-rows` run on the same
tables written as files (JSON Lines where values may be null, CSV where columns change,
since JSON Lines has no header to rename). Set DIFFENGINE_BINARY to the executable
(default: the release build in Tools/).
"""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from diffengine_spark import DiffInputError, column_changes, diff

ROOT = Path(__file__).resolve().parents[3]
BINARY = os.environ.get("DIFFENGINE_BINARY", str(ROOT / "Tools/.build/release/diffengine"))


@pytest.fixture(scope="session")
def spark():
    session = (SparkSession.builder.master("local[2]").appName("diffengine-spark-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.ansi.enabled", "true").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def frame(spark, rows, schema):
    # One partition keeps the list's order, as a file's order is kept by a file scan.
    return spark.createDataFrame(rows, schema).coalesce(1)


def as_entries(rows, key, values):
    """Output rows as comparable entries: (diff, key, ((column, left, right), ...))."""
    entries = []
    for row in rows:
        data = row.asDict()
        entries.append((data["diff"], tuple(data[name] for name in key),
                        tuple((name, data["left_" + name], data["right_" + name]) for name in values)))
    return sorted(entries, key=repr)


def cli_entries(tmp_path, old_rows, new_rows, old_names, new_names, key, values, fmt,
                ignore=(), rename=None, changed_only=False):
    """The CLI's answer on files of the same rows, as entries."""
    rename = rename or {}
    paths = []
    for side, rows, names in (("old", old_rows, old_names), ("new", new_rows, new_names)):
        path = tmp_path / f"{side}.{fmt}"
        with open(path, "w", newline="", encoding="utf-8") as handle:
            if fmt == "csv":
                writer = csv.writer(handle, lineterminator="\n")
                writer.writerow(names)
                writer.writerows(rows)
            else:
                for row in rows:
                    handle.write(json.dumps(dict(zip(names, row)), ensure_ascii=False) + "\n")
        paths.append(str(path))
    arguments = [BINARY, *paths, "--key", ",".join(key), "--ignore-order", "--format", "jsonl", "--whole-rows"]
    if not changed_only:
        arguments.append("--unchanged")
    for old_name, new_name in rename.items():
        arguments += ["--rename", f"{old_name}={new_name}"]
    if ignore:
        arguments += ["--ignore", ",".join(ignore)]
    result = subprocess.run(arguments, capture_output=True, text=True)
    assert result.returncode in (0, 1), result.stderr
    back = {new: old for old, new in rename.items()}
    entries = []
    for line in result.stdout.splitlines():
        entry = json.loads(line)
        kind = entry["change"]
        if kind not in ("deleted", "inserted", "updated", "unchanged"):
            continue
        left = entry["values"] if kind == "deleted" else entry.get("oldValues")
        right = entry["values"] if kind == "inserted" else entry.get("newValues")
        source = left if left is not None else right
        key_values = tuple(source[name] if source is left else source[rename.get(name, name)] for name in key)
        columns = tuple((name, None if left is None else left.get(back.get(name, name)),
                         None if right is None else right.get(name)) for name in values)
        entries.append(({"deleted": "D", "inserted": "I", "updated": "C", "unchanged": "N"}[kind], key_values, columns))
    return sorted(entries, key=repr)


def all_ways(spark_frames, key, values, **options):
    """Every engine and mode's entries; they must be one answer."""
    old, new = spark_frames
    changed_only = options.pop("changed_only", False)
    answers = {}
    for engine in ("spark", "binary"):
        for checksums in ((False, True) if changed_only else (False,)):
            result = diff(old, new, key=key, engine=engine, checksums=checksums, changed_only=changed_only,
                          binary=BINARY, buckets=8, **options)
            answers[(engine, checksums)] = as_entries(result.collect(), key, values)
    first = next(iter(answers.values()))
    for way, answer in answers.items():
        assert answer == first, f"{way} disagrees"
    return first


AWKWARD_OLD = [
    (1, "apple", "3"),
    (2, "pear", "4"),
    (2, "pear", "5"),          # a key repeated on both sides
    (2, "pear", "6"),
    (None, "no key", "1"),     # null keys pair with null keys
    (None, "no key 2", "1"),
    (3, None, "7"),            # null against the empty string
    (4, "", "7"),
    (5, "naïve ☃ 𝄞", "8"),    # unicode
    (6, "two\nlines, \"quoted\"", "9"),  # an embedded newline
    (7, "gone", "1"),
]
AWKWARD_NEW = [
    (2, "pear", "4"),
    (None, "no key", "2"),
    (2, "pear", "6"),          # the 2nd occurrence now differs: pairs by position
    (1, "apple", "3"),
    (3, "", "7"),
    (4, None, "7"),
    (5, "naïve ☃ 𝄞", "8"),
    (6, "two\nlines, \"quoted\"", "10"),
    (8, "new", "1"),
    (8, "new", "1"),
]


@pytest.mark.parametrize("changed_only", [False, True])
def test_awkward_rows_agree_with_the_cli(spark, tmp_path, changed_only):
    schema = "id int, name string, price string"
    frames = (frame(spark, AWKWARD_OLD, schema), frame(spark, AWKWARD_NEW, schema))
    got = all_ways(frames, ["id"], ["name", "price"], changed_only=changed_only)
    expected = cli_entries(tmp_path, AWKWARD_OLD, AWKWARD_NEW, ["id", "name", "price"], ["id", "name", "price"],
                           ["id"], ["name", "price"], "jsonl", changed_only=changed_only)
    assert got == expected
    kinds = [entry[0] for entry in got]
    assert kinds.count("I") == 2 and kinds.count("D") == 3  # 7, a 3rd pear, a 2nd null key; two 8s
    nulls = [entry for entry in got if entry[1] in ((3,), (4,))]
    assert [entry[0] for entry in nulls] == ["C", "C"], "null is not the empty string"


COLUMNS_OLD = (["id", "name", "price", "colour"],
               [["1", "apple", "3", "red"], ["2", "pear", "4", "green"], ["3", "kiwi", "5", "brown"], ["3", "kiwi", "6", "brown"]])
COLUMNS_NEW = (["title", "stock", "id", "price"],
               [["pear", "10", "2", "4"], ["apple!", "0", "1", "3"], ["kiwi", "1", "3", "5"], ["fig", "2", "4", "1"]])


def test_renamed_added_and_removed_columns_agree_with_the_cli(spark, tmp_path):
    (old_names, old_rows), (new_names, new_rows) = COLUMNS_OLD, COLUMNS_NEW
    old = frame(spark, [tuple(row) for row in old_rows], ", ".join(f"{name} string" for name in old_names))
    new = frame(spark, [tuple(row) for row in new_rows], ", ".join(f"{name} string" for name in new_names))
    rename = {"name": "title"}
    values = ["title", "price", "colour", "stock"]
    got = all_ways((old, new), ["id"], values, rename=rename)
    expected = cli_entries(tmp_path, old_rows, new_rows, old_names, new_names, ["id"], values, "csv", rename=rename)
    assert got == expected
    changes = column_changes(old, new, key="id", rename=rename)
    assert changes == {"added": ["stock"], "removed": ["colour"], "renamed": [{"old": "name", "new": "title"}]}
    report = subprocess.run([BINARY, str(tmp_path / "old.csv"), str(tmp_path / "new.csv"), "--key", "id",
                             "--rename", "name=title", "--format", "json"], capture_output=True, text=True)
    assert json.loads(report.stdout)["columns"] == changes
    # An added or removed column alone changes no row: kiwi's first occurrence is N.
    assert ("N", ("3",), (("title", "kiwi", "kiwi"), ("price", "5", "5"), ("colour", "brown", None),
                          ("stock", None, "1"))) in got


def test_ignored_columns_and_composite_keys(spark, tmp_path):
    old_rows = [(1, "eu", "a", 1), (1, "us", "b", 2), (2, "eu", "c", 3)]
    new_rows = [(1, "us", "b", 9), (1, "eu", "A", 1), (2, None, "c", 3)]
    schema = "id int, region string, name string, seen int"
    frames = (frame(spark, old_rows, schema), frame(spark, new_rows, schema))
    got = all_ways(frames, ["id", "region"], ["name", "seen"], ignore=["seen"])
    expected = cli_entries(tmp_path, old_rows, new_rows, ["id", "region", "name", "seen"],
                           ["id", "region", "name", "seen"], ["id", "region"], ["name", "seen"], "jsonl", ignore=["seen"])
    assert got == expected
    assert ("N", (1, "us"), (("name", "b", "b"), ("seen", 2, 9))) in got


@pytest.mark.parametrize("seed", [1, 2])
def test_random_tables_with_repeats_and_nulls_agree_with_the_cli(spark, tmp_path, seed):
    generator = random.Random(seed)

    def row():
        key = generator.choice([None] + list(range(150)))
        return (key, generator.choice([None, "", "x", "y", "é"]), generator.randrange(3))

    old_rows = [row() for _ in range(1_500)]
    new_rows = [r if generator.random() > 0.1 else (r[0], generator.choice([None, "", "z"]), r[2])
                for r in old_rows if generator.random() > 0.1] + [row() for _ in range(100)]
    generator.shuffle(new_rows)
    schema = "id int, name string, n int"
    frames = (frame(spark, old_rows, schema), frame(spark, new_rows, schema))
    for changed_only in (False, True):
        got = all_ways(frames, ["id"], ["name", "n"], changed_only=changed_only)
        expected = cli_entries(tmp_path, old_rows, new_rows, ["id", "name", "n"], ["id", "name", "n"],
                               ["id"], ["name", "n"], "jsonl", changed_only=changed_only)
        assert got == expected
        assert len(got) > (100 if changed_only else 1_400)


def test_checksums_skip_equal_buckets_and_keep_changes(spark):
    rows = [(index, f"v{index}") for index in range(2_000)]
    changed = list(rows)
    changed[17] = (17, None)                 # null, which xxhash64 alone would skip
    changed[500] = (500, "")
    old, new = frame(spark, rows, "id int, v string"), frame(spark, changed, "id int, v string")
    for engine in ("spark", "binary"):
        result = diff(old, new, key="id", engine=engine, checksums=True, changed_only=True, binary=BINARY, buckets=256)
        assert sorted((row["diff"], row["id"]) for row in result.collect()) == [("C", 17), ("C", 500)]


def test_bad_requests_say_what_is_wrong(spark):
    old = frame(spark, [(1, "a")], "id int, v string")
    new = frame(spark, [(1, "a")], "id bigint, v string")
    other = frame(spark, [(1, 2)], "id int, v int")
    cases = [
        (lambda: diff(old, old, key="nope"), "old: no key column 'nope'"),
        (lambda: diff(old, new, key="id"), "key column 'id' is int on the old side and bigint on the new"),
        (lambda: diff(old, other, key="id"), "compared column 'v' is string on the old side and int on the new"),
        (lambda: diff(old, old, key="id", rename={"w": "v"}), "old: no column 'w' to rename"),
        (lambda: diff(old, old, key="id", ignore=["w"]), "ignore: no column 'w' on either side"),
        (lambda: diff(old, old, key="id", checksums=True), "checksums"),
        (lambda: diff(old, old, key="id", checksums=True, changed_only=True, buckets=1000), "buckets: expected a power of two"),
        (lambda: diff(old, old, key="id", engine="pandas"), "engine: expected 'spark' or 'binary'"),
    ]
    for call, message in cases:
        with pytest.raises(DiffInputError, match=message):
            call()


def test_widened_numbers_compare_as_numbers_in_both_engines(spark):
    narrow = frame(spark, [(1, 2, "1.50"), (3, 4, "2.00"), (6, 7, "3.25")], "id int, v int, d string") \
        .selectExpr("id", "v", "cast(d as decimal(5, 2)) as d")
    wide = frame(spark, [(1, 2, "1.5"), (5, 5_000_000_000, "9.9"), (6, 8, "3.2")], "id int, v bigint, d string") \
        .selectExpr("id", "v", "cast(d as decimal(12, 1)) as d")
    for engine in ("spark", "binary"):
        rows = sorted(diff(narrow, wide, key="id", engine=engine, binary=BINARY).collect(), key=lambda row: row["id"])
        assert [(row["diff"], row["id"]) for row in rows] == [("N", 1), ("D", 3), ("I", 5), ("C", 6)], engine
        assert (rows[1]["left_v"], rows[2]["right_v"]) == (4, 5_000_000_000), engine
        assert (str(rows[1]["left_d"]), str(rows[2]["right_d"]), str(rows[3]["right_d"])) == ("2.00", "9.9", "3.2"), engine


def test_a_failing_executable_fails_the_job(spark, tmp_path):
    broken = tmp_path / "diffengine"
    broken.write_text("#!/bin/sh\necho 'diffengine: broken on purpose' >&2\nexit 2\n")
    broken.chmod(0o755)
    old = frame(spark, [(1, "a")], "id int, v string")
    with pytest.raises(Exception, match="exited with status 2"):
        diff(old, old, key="id", engine="binary", binary=str(broken)).collect()


def test_column_names_with_dots_backticks_and_spaces(spark, tmp_path):
    names = ["the id", "a.b", "c`d"]
    old_rows = [(1, "x", "y"), (2, "p", "q")]
    new_rows = [(1, "x", "z"), (3, "p", "q")]
    schema = ", ".join(f"`{name.replace('`', '``')}` {kind}" for name, kind in zip(names, ["int", "string", "string"]))
    frames = (frame(spark, old_rows, schema), frame(spark, new_rows, schema))
    got = all_ways(frames, ["the id"], ["a.b", "c`d"])
    expected = cli_entries(tmp_path, old_rows, new_rows, names, names, ["the id"], ["a.b", "c`d"], "jsonl")
    assert got == expected
    assert [entry[0] for entry in got] == ["C", "D", "I"]


def test_tables_of_keys_only(spark, tmp_path):
    # No value columns: a row is its key, so pairs are unchanged and surplus repeats go.
    old_rows = [(1,), (1,), (2,), (None,)]
    new_rows = [(1,), (3,), (None,), (None,)]
    frames = (frame(spark, old_rows, "id int"), frame(spark, new_rows, "id int"))
    got = all_ways(frames, ["id"], [])
    expected = cli_entries(tmp_path, old_rows, new_rows, ["id"], ["id"], ["id"], [], "jsonl")
    assert got == expected
    assert sorted((entry[:2] for entry in got), key=repr) == sorted([("N", (1,)), ("D", (1,)), ("D", (2,)), ("I", (3,)),
                                                         ("N", (None,)), ("I", (None,))], key=repr)


def test_a_key_repeated_thousands_of_times_pairs_by_occurrence(spark):
    # A join on the key alone would return 4,000 × 3,000 rows; the rule pairs them one to one.
    old = spark.range(4_000).selectExpr("0 AS id", "id % 7 AS v").coalesce(1)
    new = spark.range(3_000).selectExpr("0 AS id", "id % 5 AS v").coalesce(1)
    for engine in ("spark", "binary"):
        counts = {row["diff"]: row["count"] for row in
                  diff(old, new, key="id", engine=engine, binary=BINARY).groupBy("diff").count().collect()}
        same = sum(1 for index in range(3_000) if index % 7 == index % 5)
        assert counts == {"N": same, "C": 3_000 - same, "D": 1_000}, engine


def test_each_task_gets_each_side_in_table_order(spark):
    # A shuffle read on a cluster fetches its blocks in no set order, and local mode happens
    # to read them in map order, so no answer here can show a missing sort: the plan must
    # sort each task's rows by table order after the exchange, and the lines must come so.
    from diffengine_spark._diff import LINE, SEQ, make_plan, prepare, task_lines
    old = spark.range(0, 600, numPartitions=3).selectExpr("id % 5 AS id", "id AS position")
    new = spark.range(0, 400, numPartitions=2).selectExpr("id % 7 AS id", "id AS position")
    plan = make_plan(old, new, ["id"], [], None)
    lines = task_lines(prepare(old, plan, is_old=True), prepare(new, plan, is_old=False), ["k0"], 3)
    tree = lines._jdf.queryExecution().executedPlan().toString().splitlines()
    sort = next(index for index, text in enumerate(tree) if "Sort [" in text and SEQ in text)
    exchange = next(index for index, text in enumerate(tree) if "Exchange hashpartitioning" in text)
    assert sort < exchange and ", false," in tree[sort]  # above the exchange, within partitions
    partitions = lines.rdd.map(lambda row: row[LINE]).glom().collect()
    assert sum(len(part) for part in partitions) == 1_000
    for part in partitions:
        for tag in "on":
            positions = [json.loads(text[1:])["v0"] for text in part if text[0] == tag]
            assert positions == sorted(positions)
