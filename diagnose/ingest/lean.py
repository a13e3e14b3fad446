"""The lean table: only the rows an analysis reads, in compact column types.

``load`` keeps every row with every column as text, which a replay needs. A diagnosis
reads far less: the rows correlation walks and the unparsed lines the report lists.
``lean_rows(keep)`` returns the per-block step that ``load_lean`` applies as each block is
settled, so the table never holds the rest: rows that ``keep`` rejects are dropped, and
the columns with a small vocabulary (file, level, event, NodePool, zone …) become
``pl.Categorical`` (each distinct text stored once; values still read back as ``str``).
The remaining text columns are copied out of the block's buffers, so a kept row does not
keep its whole block alive.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from diagnose.schema import SCHEMA

__all__ = ["CATEGORICAL", "LEAN_SCHEMA", "NARROW", "lean_rows"]

CATEGORICAL = (
    "file", "source", "parse_status", "shape", "level", "component", "event", "nodepool", "nodeclaim", "node",
    "instance_type", "zone", "capacity_type", "error_code", "category", "quota_scope", "quota_name", "region",
    "reason", "object_kind",
)  # fmt: skip
# counts and vCPU figures fit 32 bits (memory requests, in bytes, do not)
NARROW = (
    "pod_count", "instance_types_count", "quota_limit", "quota_usage", "quota_required", "quota_new_limit",
    "requests_cpu_m", "requests_pods",
)  # fmt: skip
LEAN_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    name: pl.Categorical() if name in CATEGORICAL else pl.Int32 if name in NARROW else dtype
    for name, dtype in SCHEMA.items()
}
_TEXT = [name for name, dtype in SCHEMA.items() if dtype == pl.Utf8 and name not in CATEGORICAL]


def _column(name: str) -> pl.Expr:
    if name in _TEXT:  # a copy, not a view into the block's buffers
        return pl.concat_str([pl.col(name).cast(pl.Utf8), pl.lit("")]).alias(name)
    return pl.col(name).cast(LEAN_SCHEMA[name])


def lean_rows(keep: pl.Expr) -> Callable[[pl.DataFrame], pl.DataFrame]:
    """The per-block step: the rows ``keep`` selects, in ``LEAN_SCHEMA`` types (order kept).
    Takes a frame with the SCHEMA columns (in any types that cast to these)."""

    def apply(frame: pl.DataFrame) -> pl.DataFrame:
        # each column filtered after its cast (a categorical is cheaper to gather than text)
        mask = frame.select(keep.fill_null(False)).to_series()
        return frame.select(_column(name).filter(mask) for name in SCHEMA)

    return apply
