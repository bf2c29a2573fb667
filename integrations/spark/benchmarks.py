"""Every diff method on one pair of Parquet tables, in one SparkSession, side by side.

    python benchmarks.py --rows 5000000 --columns 4 --changes 1% --repetitions 4
    python benchmarks.py --rows 5000000 --changes 100
    python benchmarks.py --rows 2000000 --anatomy

Methods run in turn each repetition; the first repetition is dropped (JIT, caches); each
figure is the median of the rest. Every method's output is written to Spark's `noop`
sink, so all its rows are computed. The changed rows of every method are then compared
key by key with each other and with single-process `diffengine --ignore-order` on the
same tables as CSV.

Tables: an `id` key and COLUMNS - 1 value columns (integers and strings). With a
fraction, that fraction of rows is deleted, as many inserted and as many updated; with a
count, that many rows change in all (a third of each kind).

With --anatomy, the spark engine's plan is instead cut short after each of its steps, and
the checksums' passes are timed apart, the same way: where the time goes.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from diffengine_spark import diff  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--columns", type=int, default=4)
    parser.add_argument("--changes", default="1%", help="a fraction (1%%) of each kind, or a count of changed rows")
    parser.add_argument("--repetitions", type=int, default=4)
    parser.add_argument("--methods", default="spark-extension,spark,binary,binary-changed,spark-checksums,binary-checksums")
    parser.add_argument("--binary", default=os.environ.get("DIFFENGINE_BINARY", str(ROOT / "Tools/.build/release/diffengine")))
    parser.add_argument("--work", default=os.environ.get("SPARK_BENCH_WORK", "/tmp/diffengine-spark-bench"))
    parser.add_argument("--partitions", type=int, default=16, help="spark.sql.shuffle.partitions")
    parser.add_argument("--anatomy", action="store_true", help="time the spark engine step by step instead")
    return parser.parse_args()


def make_tables(spark, rows: int, columns: int, changes: str, work: Path):
    """Writes old and new tables as Parquet (and CSV for the CLI); returns their paths."""
    if changes.endswith("%"):
        period = round(100 / float(changes[:-1]))
        deleted = F.col("id") % period == 0
        updated = F.col("id") % period == 1
        inserted = rows // period
    else:
        count = int(changes)
        step = max(rows // max(count, 1), 3)
        deleted = (F.col("id") % step == 0) & (F.col("id") / step < count // 3)
        updated = (F.col("id") % step == 1) & (F.col("id") / step < count - 2 * (count // 3))
        inserted = count // 3
    base = spark.range(rows)

    def values(frame, bump):
        for index in range(1, columns):
            value = F.xxhash64(F.col("id"), F.lit(index))
            if index == 1:
                value = value + F.when(bump, 1).otherwise(0)
            frame = frame.withColumn(f"c{index}", value if index % 2 else F.format_string("s%d", value))
        return frame

    old = values(base, F.lit(False))
    new = values(base.where(~deleted).unionByName(spark.range(rows, rows + inserted)), updated)
    paths = {}
    for name, frame in (("old", old), ("new", new)):
        path = work / f"{name}.parquet"
        frame.write.mode("overwrite").parquet(str(path))
        csv_folder = work / f"{name}.csv.d"
        frame.coalesce(1).write.mode("overwrite").option("header", True).csv(str(csv_folder))
        shutil.move(glob.glob(str(csv_folder / "part-*.csv"))[0], work / f"{name}.csv")
        shutil.rmtree(csv_folder)
        paths[name] = path
    return paths


def methods(spark, binary: str):
    def extension(old, new):
        from gresearch.spark.diff import Differ
        return Differ().diff(old, new, "id")

    return {
        "spark-extension": extension,
        "spark": lambda old, new: diff(old, new, key="id", engine="spark"),
        "binary": lambda old, new: diff(old, new, key="id", engine="binary", binary=binary),
        "binary-changed": lambda old, new: diff(old, new, key="id", engine="binary", binary=binary, changed_only=True),
        "spark-checksums": lambda old, new: diff(old, new, key="id", engine="spark", checksums=True, changed_only=True),
        "binary-checksums": lambda old, new: diff(old, new, key="id", engine="binary", binary=binary,
                                                  checksums=True, changed_only=True),
    }


def timed(frames, repetitions: int) -> dict:
    """Seconds each repetition for each of `frames` (name → a function making the
    DataFrame) written to the noop sink, in turn each repetition."""
    times = {name: [] for name in frames}
    for repetition in range(repetitions):
        for name, frame in frames.items():
            started = time.perf_counter()
            frame().write.format("noop").mode("overwrite").save()
            times[name].append(time.perf_counter() - started)
        print(f"repetition {repetition + 1}: " + ", ".join(f"{name} {times[name][-1]:.2f} s" for name in frames), flush=True)
    return times


def anatomy(spark, old, new, options):
    """The spark engine's plan cut short after each step, then the checksums' passes apart:
    each cut is timed as a method is, beside spark-extension."""
    from gresearch.spark.diff import Differ
    from diffengine_spark import _diff as engine

    plan = engine.make_plan(old, new, ["id"])
    keys = [engine.key_name(0)]
    old_rows, new_rows = engine.prepare(old, plan, is_old=True), engine.prepare(new, plan, is_old=False)
    buckets = engine.DEFAULT_BUCKETS

    def both():
        return engine.both_sides(old_rows, new_rows, keys, keys_in_rows=False)

    def numbered():
        return engine.number_occurrences(both(), keys)

    # The checksums' answer, computed once, so the diff of the differing buckets is timed alone.
    differing = spark.createDataFrame(engine.differing_buckets(old_rows, new_rows, plan, buckets).collect(),
                                      f"{engine.BUCKET} bigint")

    def differing_only():
        return engine.spark_engine(engine.in_buckets(old_rows, plan, buckets, differing),
                                   engine.in_buckets(new_rows, plan, buckets, differing),
                                   plan, old.schema, new.schema).where(F.col("diff") != "N")

    steps = {
        "spark-extension": lambda: Differ().diff(old, new, "id"),
        "shuffle and first sort": lambda: both().repartition(*keys).sortWithinPartitions(*keys, engine.SIDE, engine.SEQ),
        "+ occurrences numbered": numbered,
        "+ second sort": lambda: numbered().sortWithinPartitions(*keys, engine.OCC, engine.SIDE),
        "+ occurrences lined up": lambda: engine.pair_occurrences(numbered(), keys),
        "engine=spark (+ output columns)": lambda: diff(old, new, key="id", engine="spark"),
        "both tables read, every column hashed": lambda: old.unionByName(new).select(F.xxhash64(*old.columns)),
        "checksum pass": lambda: engine.differing_buckets(old_rows, new_rows, plan, buckets),
        "diff of the differing buckets": differing_only,
        "engine=spark, checksums": lambda: diff(old, new, key="id", engine="spark", checksums=True, changed_only=True),
    }
    times = timed(steps, options.repetitions)
    reference = statistics.median(times["spark-extension"][1:] or times["spark-extension"])
    print(f"\n{options.rows:,} rows x {options.columns} columns, changes {options.changes}; Spark local[2], "
          f"{options.partitions} shuffle partitions; median of repetitions 2-{options.repetitions}; "
          f"{len(differing.collect())} of {buckets} buckets differ")
    print("| step | seconds (median) | × spark-extension |")
    print("| --- | ---: | ---: |")
    for name in steps:
        median = statistics.median(times[name][1:] or times[name])
        print(f"| {name} | {median:.2f} | {median / reference:.2f} |")


def changed_keys(frame):
    return sorted((row["diff"], row["id"]) for row in frame.where(F.col("diff") != "N").select("diff", "id").collect())


def cli_changed_keys(binary: str, work: Path):
    started = time.perf_counter()
    result = subprocess.run([binary, str(work / "old.csv"), str(work / "new.csv"), "--key", "id", "--ignore-order",
                             "--format", "jsonl"], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    assert result.returncode in (0, 1), result.stderr
    kinds = {"deleted": "D", "inserted": "I", "updated": "C"}
    keys = []
    for line in result.stdout.splitlines():
        entry = json.loads(line)
        if entry["change"] in kinds:
            keys.append((kinds[entry["change"]], int(entry["key"]["id"])))
    return sorted(keys), seconds


def main():
    options = arguments()
    work = Path(options.work)
    work.mkdir(parents=True, exist_ok=True)
    spark = (SparkSession.builder.master("local[2]").appName("diffengine-spark-benchmarks")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "8g")
             .config("spark.sql.shuffle.partitions", str(options.partitions)).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    paths = make_tables(spark, options.rows, options.columns, options.changes, work)
    old, new = spark.read.parquet(str(paths["old"])), spark.read.parquet(str(paths["new"]))
    if options.anatomy:
        anatomy(spark, old, new, options)
        spark.stop()
        return
    chosen = options.methods.split(",")
    table = methods(spark, options.binary)
    times = timed({name: lambda method=table[name]: method(old, new) for name in chosen}, options.repetitions)

    expected, cli_seconds = cli_changed_keys(options.binary, work)
    agree = {name: changed_keys(table[name](old, new)) == expected for name in chosen}
    print(f"\n{options.rows:,} rows x {options.columns} columns, changes {options.changes}: "
          f"{len(expected):,} changed rows; Spark local[2], {options.partitions} shuffle partitions; "
          f"median of repetitions 2-{options.repetitions}")
    reference = statistics.median(times[chosen[0]][1:]) if options.repetitions > 1 else times[chosen[0]][0]
    print(f"| method | seconds (median) | range | × {chosen[0]} | same changed keys as the CLI |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name in chosen:
        kept = times[name][1:] or times[name]
        median = statistics.median(kept)
        print(f"| {name} | {median:.2f} | {min(kept):.2f}–{max(kept):.2f} | {median / reference:.2f} | {'yes' if agree[name] else 'NO'} |")
    print(f"\nsingle-process diffengine --ignore-order on the CSV pair: {cli_seconds:.2f} s")
    spark.stop()
    if not all(agree.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
