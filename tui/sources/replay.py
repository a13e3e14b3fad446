"""Replaying ingested logs and event dumps: a timeline that can be stepped, scrubbed and played.

``Timeline`` holds the normalised table in time order (records without a timestamp keep
the time of the record before them in the same file). ``state_at(position)`` gives the
ClusterState after the first ``position`` records: forward moves fold only the new
records in; backward moves start again from the nearest checkpoint before the target
(a copy of the state kept every ``CHECKPOINT`` records).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import polars as pl

from diagnose import ingest
from diagnose.findings import InputStats
from tui.state import ClusterState

__all__ = ["CHECKPOINT", "Timeline", "load_frame"]

CHECKPOINT = 20_000  # records between kept copies of the state (without their log, which only grows)


def load_frame(
    paths: Sequence[str], events: Sequence[str] = (), progress: Callable[[int, int], None] | None = None
) -> tuple[pl.DataFrame, InputStats | None]:
    """Read log files and event dumps into the normalised table (karp-diagnose's ingest);
    ``progress(bytes_done, bytes_total)`` is called as it goes."""
    ingested = ingest.load(list(paths), events=list(events), progress=progress)
    return ingested.frame, ingested.stats


class Timeline:
    def __init__(self, frame: pl.DataFrame, stats: InputStats | None = None) -> None:
        ordered = (
            frame.with_row_index("_order")
            .with_columns(pl.col("time").forward_fill().over("file").alias("_sort_time"))
            .sort(["_sort_time", "_order"], nulls_last=False, maintain_order=True)
        )
        self.frame = ordered.drop("_order", "_sort_time")
        self.stats = stats
        self.rows: list[dict[str, Any]] = self.frame.to_dicts()
        self.times: list[datetime | None] = list(ordered["_sort_time"])
        self._state = ClusterState()
        self._applied = 0
        self._checkpoints: dict[int, tuple[ClusterState, int]] = {0: (ClusterState(), 0)}

    def __len__(self) -> int:
        return len(self.rows)

    def clamp(self, position: int) -> int:
        return max(0, min(position, len(self.rows)))

    def state_at(self, position: int) -> ClusterState:
        position = self.clamp(position)
        if position < self._applied:
            start = max(k for k in self._checkpoints if k <= position)
            kept, log_length = self._checkpoints[start]
            restored = kept.copy(log=False)
            restored.restore_log(self._state.log[:log_length])
            self._state, self._applied = restored, start
        while self._applied < position:
            stop = min(position, (self._applied // CHECKPOINT + 1) * CHECKPOINT)
            self._state.apply_many(self.rows[self._applied : stop])
            self._applied = stop
            if stop % CHECKPOINT == 0 and stop not in self._checkpoints:
                self._checkpoints[stop] = (self._state.copy(log=False), len(self._state.log))
        return self._state

    def time_at(self, position: int) -> datetime | None:
        """Time of the last record folded in at ``position`` (None before the first)."""
        position = self.clamp(position)
        return self.times[position - 1] if position else None

    def delay_after(self, position: int) -> float:
        """Seconds of log time between record ``position`` and the next one."""
        if position <= 0 or position >= len(self.rows):
            return 0.0
        before, after = self.times[position - 1], self.times[position]
        if before is None or after is None:
            return 0.0
        return max((after - before).total_seconds(), 0.0)

    def head(self, position: int) -> pl.DataFrame:
        return self.frame.head(self.clamp(position))
