"""The keyed diff of two CSV or JSON Lines files in DuckDB or polars, as a data engineer
writes it: a full outer join on `id` with every other column compared null-aware (`IS
DISTINCT FROM`). A CSV value is read as text, as diffengine compares it, so no type inference
runs and `01` and `1` differ in all three tools; JSON Lines values keep their JSON types.

    python3 dataframe_diff.py duckdb|polars counts|rows OLD NEW OUT

`counts` writes {"deleted": …, "inserted": …, "updated": …}; `rows` writes the changed rows
as JSON Lines (a deleted row whole, an inserted row whole, an updated row's key with its old
and new rows) and the same counts. Prints the seconds from reading the files to the last
byte written, without the interpreter's start and the library's import.
"""
import json
import sys
import time

tool, mode, old_path, new_path, out_path = sys.argv[1:6]
COLUMNS = ["name", "email", "city", "amount", "note"]


def run_duckdb():
    import duckdb

    connection = duckdb.connect()
    read = ("read_json('{}', format = 'newline_delimited')" if old_path.endswith(".jsonl")
            else "read_csv('{}', header = true, all_varchar = true)")
    sides = f"WITH o AS (SELECT * FROM {read.format(old_path)}), n AS (SELECT * FROM {read.format(new_path)})"
    changed = " OR ".join(f"o.{c} IS DISTINCT FROM n.{c}" for c in COLUMNS)
    if mode == "counts":
        deleted, inserted, updated = connection.execute(f"""
            {sides}
            SELECT count(*) FILTER (WHERE n.id IS NULL), count(*) FILTER (WHERE o.id IS NULL),
                   count(*) FILTER (WHERE o.id IS NOT NULL AND n.id IS NOT NULL AND ({changed}))
            FROM o FULL OUTER JOIN n ON o.id = n.id
        """).fetchone()
        return {"deleted": deleted, "inserted": inserted, "updated": updated}
    row = lambda side: "{" + ", ".join(f"'{c}': {side}.{c}" for c in ["id"] + COLUMNS) + "}"
    connection.execute(f"""
        COPY (
            {sides}
            SELECT CASE WHEN n.id IS NULL THEN 'deleted' WHEN o.id IS NULL THEN 'inserted' ELSE 'updated' END AS change,
                   coalesce(o.id, n.id) AS id,
                   CASE WHEN o.id IS NOT NULL THEN {row('o')} END AS old,
                   CASE WHEN n.id IS NOT NULL THEN {row('n')} END AS new
            FROM o FULL OUTER JOIN n ON o.id = n.id
            WHERE o.id IS NULL OR n.id IS NULL OR ({changed})
        ) TO '{out_path}' (FORMAT json)
    """)
    return None


def run_polars():
    import polars as pl

    if old_path.endswith(".jsonl"):
        old, new = pl.read_ndjson(old_path), pl.read_ndjson(new_path)
    else:
        old, new = pl.read_csv(old_path, infer_schema=False), pl.read_csv(new_path, infer_schema=False)
    joined = old.join(new, on="id", how="full", suffix="_new")
    deleted = pl.col("id_new").is_null()
    inserted = pl.col("id").is_null()
    changed = pl.any_horizontal([pl.col(c).ne_missing(pl.col(c + "_new")) for c in COLUMNS])
    updated = ~deleted & ~inserted & changed
    if mode == "counts":
        counts = joined.select(deleted.sum().alias("deleted"), inserted.sum().alias("inserted"),
                               updated.sum().alias("updated")).row(0, named=True)
        return {name: int(value) for name, value in counts.items()}
    side = lambda suffix: pl.struct([pl.col(c + suffix).alias(c) for c in ["id"] + COLUMNS])
    joined.filter(deleted | inserted | updated).select(
        pl.when(deleted).then(pl.lit("deleted")).when(inserted).then(pl.lit("inserted"))
        .otherwise(pl.lit("updated")).alias("change"),
        pl.coalesce("id", "id_new").alias("id"),
        pl.when(~inserted).then(side("")).alias("old"),
        pl.when(~deleted).then(side("_new")).alias("new"),
    ).write_ndjson(out_path)
    return None


def count_lines(path):
    counts = {"deleted": 0, "inserted": 0, "updated": 0}
    with open(path, "rb") as lines:
        for line in lines:
            counts[json.loads(line)["change"]] += 1
    return counts


# The library is imported before the clock starts (run_* import it again, from the cache).
__import__("duckdb" if tool == "duckdb" else "polars")
start = time.perf_counter()
counts = run_duckdb() if tool == "duckdb" else run_polars()
seconds = time.perf_counter() - start
if counts is None:
    counts = count_lines(out_path)  # the written rows, counted after the clock stops
else:
    with open(out_path, "w") as out:
        json.dump(counts, out)
print(json.dumps({"seconds": seconds, "counts": counts}))
