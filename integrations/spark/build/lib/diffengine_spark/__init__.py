"""Keyed table diffs on Apache Spark with the `diffengine` CLI's rules.

    from diffengine_spark import diff
    changes = diff(old_df, new_df, key=["id"], engine="binary", changed_only=True)

See the package's README for the rules, the engines and running on a cluster.
"""

from ._diff import column_changes, diff
from ._plan import DiffInputError

__all__ = ["diff", "column_changes", "DiffInputError"]
__version__ = "0.1.0"
