"""What is compared: the column plan shared by both engines, as the CLI makes it."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType


class DiffInputError(ValueError):
    """A diff that cannot be made as asked: a missing key column, a bad rename, a clash
    with the output's column names. The message names the side and the column."""


@dataclass(frozen=True)
class ColumnPlan:
    """Which columns pair, which are compared, and what the output calls them.

    Columns are matched by name, whatever their order. A renamed column carries its new
    name on both sides. `values` lists every non-key column once, in the old side's order
    and then the added ones in the new side's order: the output has `left_<c>` and
    `right_<c>` for each (`left_` null for an added column, `right_` for a removed one).
    """

    key: list[str]
    # The key columns' names on the new side (a key column may be renamed).
    new_key: list[str]
    # Non-key columns under their output names, and where each comes from on each side.
    values: list[str]
    old_source: dict[str, str | None]
    new_source: dict[str, str | None]
    compared: list[str]
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)

    def column_changes(self) -> dict:
        """The CLI's `columns` object: `{"added": [...], "removed": [...], "renamed":
        [{"old": ..., "new": ...}]}`."""
        return {
            "added": list(self.added),
            "removed": list(self.removed),
            "renamed": [{"old": old, "new": new} for old, new in self.renamed],
        }


RESERVED_PREFIX = "__diffengine_"


def make_plan(old: DataFrame | StructType, new: DataFrame | StructType, key: list[str],
              ignore: list[str] | None = None, rename: dict[str, str] | None = None) -> ColumnPlan:
    """The column plan for `old` against `new` (DataFrames or their schemas)."""
    old_schema = old if isinstance(old, StructType) else old.schema
    new_schema = new if isinstance(new, StructType) else new.schema
    old_names, new_names = old_schema.names, new_schema.names
    ignore, rename = list(ignore or []), dict(rename or {})
    if not key:
        raise DiffInputError("key: name at least one key column")
    for side, names in (("old", old_names), ("new", new_names)):
        seen = set()
        for name in names:
            if name in seen:
                raise DiffInputError(f"{side}: column '{name}' appears twice")
            if name.startswith(RESERVED_PREFIX):
                raise DiffInputError(f"{side}: column '{name}' uses the prefix {RESERVED_PREFIX}, which the diff keeps for itself")
            seen.add(name)
    if len(set(key)) != len(key):
        raise DiffInputError("key: a column is named twice")
    for old_name, new_name in rename.items():
        if old_name not in old_names:
            raise DiffInputError(f"old: no column '{old_name}' to rename")
        if new_name not in new_names:
            raise DiffInputError(f"new: no column '{new_name}', the new name of '{old_name}'")
    renamed_to = set(rename.values())
    if len(renamed_to) != len(rename):
        raise DiffInputError("rename: two columns renamed to one name")
    new_key = [rename.get(name, name) for name in key]
    for name, new_name in zip(key, new_key):
        if name not in old_names:
            raise DiffInputError(f"old: no key column '{name}'")
        if new_name not in new_names:
            raise DiffInputError(f"new: no key column '{new_name}'")
    for name in ignore:
        if name in key:
            raise DiffInputError(f"ignore: '{name}' is a key column")
        if name not in old_names and name not in new_names and name not in renamed_to:
            raise DiffInputError(f"ignore: no column '{name}' on either side")

    values, old_source, new_source = [], {}, {}
    added, removed = [], []
    renamed = [(name, rename[name]) for name in old_names if name in rename]
    for name in old_names:
        if name in key:
            continue
        output = rename.get(name, name)
        if output in old_source:
            raise DiffInputError(f"rename: old column '{name}' and the column renamed to '{output}' would share a name")
        if name in rename:
            new_name = output
        elif name in new_names and name not in renamed_to:
            new_name = name
        else:
            new_name = None
            removed.append(name)
        values.append(output)
        old_source[output] = name
        new_source[output] = new_name
    for name in new_names:
        if name in new_key or name in renamed_to:
            continue
        if name in old_source and new_source[name] == name:
            continue
        if name in old_source or name in key:
            raise DiffInputError(f"new: column '{name}' would share its name with a renamed column")
        added.append(name)
        values.append(name)
        old_source[name] = None
        new_source[name] = name
    ignored = set(ignore) | {rename.get(name, name) for name in ignore}
    compared = [name for name in values
                if old_source[name] is not None and new_source[name] is not None and name not in ignored]
    output = ["diff"] + list(key) + [prefix + name for name in values for prefix in ("left_", "right_")]
    clashes = sorted({name for name in output if output.count(name) > 1})
    if clashes:
        raise DiffInputError(f"output: column '{clashes[0]}' would appear twice (the output has diff, the keys, and left_/right_ of each other column)")
    return ColumnPlan(key=list(key), new_key=new_key, values=values, old_source=old_source, new_source=new_source,
                      compared=compared, added=added, removed=removed, renamed=renamed)
