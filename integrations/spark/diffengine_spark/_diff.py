"""The keyed diff of two DataFrames, in spark-extension's column-by-column schema."""

from __future__ import annotations

import shutil

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (ByteType, DecimalType, IntegerType, LongType, ShortType, StringType,
                               StructField, StructType)

from ._plan import RESERVED_PREFIX, ColumnPlan, DiffInputError, make_plan

SEQ = RESERVED_PREFIX + "seq"
OCC = RESERVED_PREFIX + "occ"
SIDE = RESERVED_PREFIX + "side"
LINE = RESERVED_PREFIX + "line"
BUCKET = RESERVED_PREFIX + "bucket"
# Key-hash buckets for `checksums`: about 300 rows a bucket at 5M rows.
DEFAULT_BUCKETS = 1 << 14

# Types whose values JSON and Spark SQL both compare as numbers: a column may change
# between them (int to bigint, a decimal's scale) and both engines still agree.
EXACT_NUMBERS = (ByteType, ShortType, IntegerType, LongType, DecimalType)


def column(name: str) -> Column:
    """A top-level column by its exact name, dots and backticks included."""
    return F.col("`" + name.replace("`", "``") + "`")


def key_name(index: int) -> str:
    return f"k{index}"


def value_name(index: int) -> str:
    return f"v{index}"


def diff(old: DataFrame, new: DataFrame, key: list[str] | str, ignore: list[str] | None = None,
         rename: dict[str, str] | None = None, engine: str = "spark", checksums: bool = False,
         changed_only: bool = False, partitions: int | None = None, buckets: int = DEFAULT_BUCKETS,
         binary: str | None = None) -> DataFrame:
    """The keyed diff of `old` and `new`, with the `diffengine` CLI's rules.

    Returns a DataFrame in spark-extension's schema: `diff` (`N` no change, `I` inserted,
    `D` deleted, `C` changed), the key columns, then `left_<c>` and `right_<c>` for every
    other column (old side's order, then added columns).

    Rules (the CLI's, see CLI.md): keys match null-safely (a null key pairs with a null
    key); a key repeated on one side pairs its k-th old occurrence with its k-th new
    occurrence, in each DataFrame's order (`monotonically_increasing_id`: a file's order
    for a file scan); null is not the empty string; columns match by name; a column only
    the new side has is added and one only the old side has is removed — neither makes a
    row changed, and the other side's `left_`/`right_` column is null; `rename` maps old
    names to new ones, whose values are then compared under the new name.

    Parameters:
        key: the key columns (old names; a renamed key takes its new name on the new side).
        ignore: columns left out of the comparison (still in the output).
        rename: old column name → new column name.
        engine: `"spark"` (Spark SQL: both sides in one shuffle by key, occurrences paired
            by two window passes) or `"binary"` (repartition by key hash; each task runs
            the `diffengine` executable on its partition through `RDD.pipe`).
        checksums: first compare a count and an order-free checksum per key-hash bucket on
            each side, and diff only the buckets that differ. Needs `changed_only=True`
            (rows of equal buckets are not paired).
        changed_only: leave out `N` rows.
        partitions: tasks for the binary engine (default `spark.sql.shuffle.partitions`).
        buckets: key-hash buckets for `checksums`, a power of two.
        binary: the `diffengine` executable as executors see it: a path, or a name in the
            task's working folder (`./diffengine` when shipped with `--files`). Default: the
            `diffengine` on the driver's PATH.

    Raises `DiffInputError` for a missing key column, a bad rename or ignore, or a column
    whose type differs between the sides in a way the engines would compare differently.

    Cost: the spark engine shuffles each side once and sorts both by key, twice; the
    binary engine shuffles each side once and streams every row through the executable as
    JSON. Rows with a null key all land in one task (see the README).
    """
    if isinstance(key, str):
        key = [key]
    if engine not in ("spark", "binary"):
        raise DiffInputError(f"engine: expected 'spark' or 'binary', not {engine!r}")
    if checksums and not changed_only:
        raise DiffInputError("checksums: unchanged buckets are not paired, so pass changed_only=True")
    plan = make_plan(old, new, list(key), ignore, rename)
    check_types(old.schema, new.schema, plan)
    old_rows, new_rows = prepare(old, plan, is_old=True), prepare(new, plan, is_old=False)
    if checksums:
        differing = differing_buckets(old_rows, new_rows, plan, buckets)
        old_rows, new_rows = (in_buckets(old_rows, plan, buckets, differing),
                              in_buckets(new_rows, plan, buckets, differing))
    if engine == "spark":
        result = spark_engine(old_rows, new_rows, plan, old.schema, new.schema)
        return result.where(F.col("diff") != "N") if changed_only else result
    return binary_engine(old_rows, new_rows, plan, old.schema, new.schema, changed_only,
                         partitions, binary)


def column_changes(old: DataFrame, new: DataFrame, key: list[str] | str, ignore: list[str] | None = None,
                   rename: dict[str, str] | None = None) -> dict:
    """The column changes as the CLI's `--format json` reports them: `{"added": [...],
    "removed": [...], "renamed": [{"old": ..., "new": ...}]}`."""
    return make_plan(old, new, [key] if isinstance(key, str) else list(key), ignore, rename).column_changes()


def check_types(old: StructType, new: StructType, plan: ColumnPlan) -> None:
    """Key and compared columns must compare the same way in both engines."""
    def field(schema, name):
        return schema[name].dataType

    pairs = [(name, field(old, name), field(new, new_name), "key") for name, new_name in zip(plan.key, plan.new_key)]
    pairs += [(name, field(old, plan.old_source[name]), field(new, plan.new_source[name]), "compared")
              for name in plan.compared]
    for name, old_type, new_type, role in pairs:
        if old_type == new_type:
            continue
        if role == "compared" and isinstance(old_type, EXACT_NUMBERS) and isinstance(new_type, EXACT_NUMBERS):
            continue
        raise DiffInputError(
            f"{role} column '{name}' is {old_type.simpleString()} on the old side and "
            f"{new_type.simpleString()} on the new: cast one side, or ignore the column")


def prepare(frame: DataFrame, plan: ColumnPlan, is_old: bool) -> DataFrame:
    """One side's rows under positional names (`k0…`, `v0…`: only the columns this side
    has) and its order (`SEQ`)."""
    keys = plan.key if is_old else plan.new_key
    source = plan.old_source if is_old else plan.new_source
    columns = [column(name).alias(key_name(index)) for index, name in enumerate(keys)]
    columns += [column(source[name]).alias(value_name(index)) for index, name in enumerate(plan.values)
                if source[name] is not None]
    return frame.select(*columns, F.monotonically_increasing_id().alias(SEQ))


def spark_engine(old: DataFrame, new: DataFrame, plan: ColumnPlan, old_schema: StructType,
                 new_schema: StructType) -> DataFrame:
    """Both sides in one shuffle by key; two window passes pair the k-th occurrences.

    The sides travel as one DataFrame (key columns, side, order, and the row's other
    values as a struct, null on the other side), shuffled once by key and sorted by key,
    side and order. The first window pass numbers each row's occurrence within its key and
    side; the second, within key and occurrence (at most one old and one new row), gives an
    old row the new row beside it. Window partitions group null keys together, so key
    matching is null-safe with no rewriting of the key. The second pass sorts again, but
    its rows arrive in key order and, for a key seen once on each side, already in
    occurrence order; a join on key and occurrence instead would shuffle both sides again
    (Spark wants join sides partitioned by every join key).
    """
    keys = [key_name(index) for index in range(len(plan.key))]
    paired = pair_occurrences(number_occurrences(both_sides(old, new, keys, keys_in_rows=False), keys), keys)

    old_absent, new_absent = F.col("o").isNull(), F.col("n").isNull()
    same = F.lit(True)
    for name in plan.compared:
        index = value_name(plan.values.index(name))
        same = same & F.col(f"o.{index}").eqNullSafe(F.col(f"n.{index}"))
    change = F.when(old_absent, "I").when(new_absent, "D").when(same, "N").otherwise("C")
    output = [change.alias("diff")]
    output += [F.col(key).alias(name) for key, name in zip(keys, plan.key)]
    for index, name in enumerate(plan.values):
        output += [value_column("o", index, plan.old_source[name], old_schema, plan.new_source[name], new_schema).alias("left_" + name),
                   value_column("n", index, plan.new_source[name], new_schema, plan.old_source[name], old_schema).alias("right_" + name)]
    return paired.select(*output)


def number_occurrences(rows: DataFrame, keys: list[str]) -> DataFrame:
    """The first window pass over `both_sides` rows: each row's occurrence within its key
    and side, from 1, in `OCC`."""
    by_key = Window.partitionBy(*keys).orderBy(SIDE, SEQ)
    old_count = F.count(F.col("o")).over(by_key.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing))
    occurrence = F.row_number().over(by_key) - F.when(F.col(SIDE) == 1, old_count).otherwise(0)
    return rows.select(*keys, SIDE, "o", "n", occurrence.alias(OCC))


def pair_occurrences(rows: DataFrame, keys: list[str]) -> DataFrame:
    """The second window pass: one row (the keys, `o`, `n`) for each pair of an old and a
    new row with the same key and occurrence, and for each row left alone."""
    by_occurrence = Window.partitionBy(*keys, OCC).orderBy(SIDE)
    first = F.row_number().over(by_occurrence) == 1
    partner = F.lead(F.col("n")).over(by_occurrence)
    return (rows.select(*keys, "o", F.when(F.col(SIDE) == 0, partner).otherwise(F.col("n")).alias("n"),
                        first.alias("first"))
            .where(F.col("o").isNotNull() | F.col("first")))


def both_sides(old: DataFrame, new: DataFrame, keys: list[str], keys_in_rows: bool) -> DataFrame:
    """Both sides as one DataFrame: the key columns, `SIDE` (0 old, 1 new), `SEQ`, and the
    row as a struct in `o` (old rows) or `n` (new rows), null on the other side. The row
    holds the non-key columns, and the keys too when `keys_in_rows`."""
    def tagged(frame: DataFrame, side: int) -> DataFrame:
        row = F.struct(*[F.col(name) for name in frame.columns
                         if name != SEQ and (keys_in_rows or name not in keys)])
        return frame.select(*keys, F.lit(side).alias(SIDE), SEQ, row.alias("o" if side == 0 else "n"))

    old_rows, new_rows = tagged(old, 0), tagged(new, 1)
    old_rows = old_rows.withColumn("n", F.lit(None).cast(new_rows.schema["n"].dataType))
    new_rows = new_rows.withColumn("o", F.lit(None).cast(old_rows.schema["o"].dataType))
    return old_rows.unionByName(new_rows)


def value_column(tag: str, index: int, source: str | None, schema: StructType, other: str | None,
                 other_schema: StructType) -> Column:
    """One side's value, or a null of the other side's type where this side lacks the column."""
    if source is None:
        return F.lit(None).cast(other_schema[other].dataType)
    return F.col(f"{tag}.{value_name(index)}")


def differing_buckets(old: DataFrame, new: DataFrame, plan: ColumnPlan, buckets: int) -> DataFrame:
    """The key-hash buckets (one column, `BUCKET`) whose count or checksum differ.

    A row's checksum is XXH64 over its key and compared values with a null flag beside
    each (Spark's `xxhash64` skips nulls, so null, "" and a missing value would agree),
    summed per bucket as two 32-bit halves in 64-bit sums: order-free, and no overflow
    under ANSI arithmetic below 2^31 rows a bucket a side.
    """
    if buckets < 1 or buckets & (buckets - 1):
        raise DiffInputError(f"buckets: expected a power of two, not {buckets}")
    keys = [F.col(key_name(index)) for index in range(len(plan.key))]
    compared = [F.col(value_name(plan.values.index(name))) for name in plan.compared]

    def signed(frame: DataFrame, sign: int) -> DataFrame:
        hashed = []
        for value in keys + compared:
            hashed += [value, value.isNull()]
        row_hash = F.xxhash64(*hashed)
        low = row_hash.bitwiseAND(F.lit(0xFFFFFFFF))
        high = F.shiftrightunsigned(row_hash, 32)
        return frame.select(bucket_of(keys, buckets).alias(BUCKET), F.lit(sign).alias("count"),
                            (low * sign).alias("low"), (high * sign).alias("high"))

    # Old rows count up and new rows down, in one aggregation: a bucket is equal on both
    # sides exactly when its three sums are zero.
    sums = (signed(old, 1).unionByName(signed(new, -1)).groupBy(BUCKET)
            .agg(F.sum("count").alias("count"), F.sum("low").alias("low"), F.sum("high").alias("high")))
    return sums.where((F.col("count") != 0) | (F.col("low") != 0) | (F.col("high") != 0)).select(BUCKET)


def in_buckets(frame: DataFrame, plan: ColumnPlan, buckets: int, differing: DataFrame) -> DataFrame:
    """The rows of one prepared side whose key hashes to a bucket in `differing`, in the
    side's order (`SEQ` is already set)."""
    keys = [F.col(key_name(index)) for index in range(len(plan.key))]
    # A handful of buckets: broadcast them.
    return (frame.withColumn(BUCKET, bucket_of(keys, buckets))
            .join(F.broadcast(differing), on=BUCKET, how="left_semi").drop(BUCKET))


def bucket_of(keys: list[Column], buckets: int) -> Column:
    """The key's bucket: low bits of its hash. A mask, unlike `pmod`, cannot be null, so
    Spark adds no null filter that computes the hash a second time for every row."""
    flagged = []
    for key in keys:
        flagged += [key, key.isNull()]
    return F.xxhash64(*flagged).bitwiseAND(F.lit(buckets - 1))


# The task's command: split the tagged lines into the two sides' files, run diffengine,
# map its exit status 1 (differences) to 0 so that Spark does not fail the task.
PARTITION_SCRIPT = r"""
dir=$(mktemp -d "${TMPDIR:-/tmp}/diffengine-spark.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT
LC_ALL=C awk -v old="$dir/old" -v new="$dir/new" '
    BEGIN { printf "" > old; printf "" > new }
    { if (substr($0, 1, 1) == "o") print substr($0, 2) > old; else print substr($0, 2) > new }
' || exit 2
binary=$1
shift
"$binary" "$dir/old" "$dir/new" "$@"
status=$?
if [ "$status" -le 1 ]; then exit 0; fi
exit "$status"
"""


def task_lines(old: DataFrame, new: DataFrame, keys: list[str], partitions: int) -> DataFrame:
    """What each task of the binary engine pipes to `diffengine`: its key-hash partition of
    both sides as tagged JSON Lines (`o` or `n`, then the row), each side in table order."""
    # Rows travel the shuffle typed (smaller than their text) and become JSON after it.
    json_options = {"ignoreNullFields": "false"}
    line = F.when(F.col(SIDE) == 0, F.concat(F.lit("o"), F.to_json(F.col("o"), json_options))) \
        .otherwise(F.concat(F.lit("n"), F.to_json(F.col("n"), json_options)))
    # Each side's rows in table order (the k-th occurrence rule): a shuffle read on a cluster
    # fetches its blocks in no set order (local mode happens to read them in map order, so
    # answers in tests cannot show a missing sort). The sides may interleave, since the
    # task's script splits them by tag. One long column: Spark radix-sorts it.
    return (both_sides(old, new, keys, keys_in_rows=True).repartition(partitions, *[F.col(name) for name in keys])
            .sortWithinPartitions(SEQ).select(line.alias(LINE)))


def binary_engine(old: DataFrame, new: DataFrame, plan: ColumnPlan, old_schema: StructType,
                  new_schema: StructType, changed_only: bool, partitions: int | None,
                  binary: str | None) -> DataFrame:
    """Repartition both sides by key hash; each task pipes its partition, as JSON Lines,
    through `diffengine --ignore-order` and its answer becomes the output rows."""
    spark = old.sparkSession
    if binary is None:
        binary = shutil.which("diffengine")
        if binary is None:
            raise DiffInputError("binary: no diffengine on PATH; pass binary=")
    if partitions is None:
        partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    keys = [key_name(index) for index in range(len(plan.key))]

    tagged = task_lines(old, new, keys, partitions)
    ignored = [value_name(index) for index, name in enumerate(plan.values) if name not in plan.compared]
    arguments = [binary, "--input", "jsonl", "--key", ",".join(keys), "--ignore-order", "--format", "jsonl", "--whole-rows"]
    if ignored:
        arguments += ["--ignore", ",".join(ignored)]
    if not changed_only:
        arguments.append("--unchanged")

    jvm = spark._jvm
    strings = jvm.org.apache.spark.sql.Encoders.STRING()
    java_lines = getattr(tagged._jdf, "as")(strings).javaRDD()
    command = jvm.java.util.ArrayList()
    for part in ["sh", "-c", PARTITION_SCRIPT, "diffengine-spark"] + arguments:
        command.add(part)
    environment = jvm.java.util.HashMap()
    piped = java_lines.pipe(command, environment, False, 1 << 16, "UTF-8")
    answers = spark._jsparkSession.createDataset(piped.rdd(), strings)
    old_struct = side_schema(plan, old_schema, is_old=True)
    new_struct = side_schema(plan, new_schema, is_old=False)
    either = either_schema(old_struct, new_struct)
    schema = StructType([StructField("change", StringType()), StructField("values", either),
                         StructField("oldValues", old_struct), StructField("newValues", new_struct)])
    reader = spark._jsparkSession.read().schema(jvm.org.apache.spark.sql.types.DataType.fromJson(schema.json()))
    parsed = DataFrame(reader.json(answers), spark)
    change = F.col("change")
    parsed = parsed.where(change.isin("deleted", "inserted", "updated", "unchanged"))
    deleted, inserted = change == "deleted", change == "inserted"

    def left(field: str) -> Column:
        return F.when(deleted, F.col(f"values.{field}").cast(old_struct[field].dataType)).otherwise(F.col(f"oldValues.{field}"))

    def right(field: str) -> Column:
        return F.when(inserted, F.col(f"values.{field}").cast(new_struct[field].dataType)).otherwise(F.col(f"newValues.{field}"))

    output = [F.when(deleted, "D").when(inserted, "I").when(change == "updated", "C").otherwise("N").alias("diff")]
    output += [F.when(inserted, right(key)).otherwise(left(key)).alias(name) for key, name in zip(keys, plan.key)]
    for index, name in enumerate(plan.values):
        value = value_name(index)
        if plan.old_source[name] is None:
            left_value = F.lit(None).cast(new_schema[plan.new_source[name]].dataType)
        else:
            left_value = left(value)
        if plan.new_source[name] is None:
            right_value = F.lit(None).cast(old_schema[plan.old_source[name]].dataType)
        else:
            right_value = right(value)
        output += [left_value.alias("left_" + name), right_value.alias("right_" + name)]
    return parsed.select(*output)


def either_schema(old: StructType, new: StructType) -> StructType:
    """The type `values` is read with (an old row when deleted, a new one when inserted):
    every field of either side; where the sides' types differ (integers and decimals, see
    `check_types`), a decimal wide enough for both, cast back to the side's type after."""
    fields = {field.name: field.dataType for field in old.fields}
    for field in new.fields:
        if field.name in fields and fields[field.name] != field.dataType:
            scales = [getattr(kind, "scale", 0) for kind in (fields[field.name], field.dataType)]
            fields[field.name] = DecimalType(38, max(scales))
        else:
            fields.setdefault(field.name, field.dataType)
    return StructType([StructField(name, kind) for name, kind in fields.items()])


def side_schema(plan: ColumnPlan, schema: StructType, is_old: bool) -> StructType:
    """One side's row as the JSON the engine sent: positional names, the side's types."""
    keys = plan.key if is_old else plan.new_key
    source = plan.old_source if is_old else plan.new_source
    fields = [StructField(key_name(index), schema[name].dataType) for index, name in enumerate(keys)]
    fields += [StructField(value_name(index), schema[source[name]].dataType)
               for index, name in enumerate(plan.values) if source[name] is not None]
    return StructType(fields)
