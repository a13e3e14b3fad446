"""Findings for the records seen so far, from karp-diagnose's analysis (``diagnose.api.analyse``)."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from diagnose import api
from diagnose.findings import Finding, InputStats
from diagnose.quota import QuotaSource
from diagnose.schema import PARSED, REPAIRED, UNPARSED

__all__ = ["findings_for", "stats_of"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def stats_of(frame: pl.DataFrame) -> InputStats:
    """Input counts of a (partial) table: what the analysis needs besides the rows."""
    status = frame["parse_status"]
    return InputStats(
        lines=int((frame["source"] != "event").sum()),
        parsed=int((status == PARSED).sum()),
        repaired=int((status == REPAIRED).sum()),
        unparsed=int((status == UNPARSED).sum()),
        files=[str(f) for f in frame["file"].unique(maintain_order=True).drop_nulls()],
        events=int((frame["source"] == "event").sum()),
    )


def findings_for(frame: pl.DataFrame, quota_source: QuotaSource | None = None) -> list[Finding]:
    """karp-diagnose's findings over ``frame`` (the normalised table); [] for an empty table."""
    if frame.height == 0:
        return []
    report = api.analyse(frame, stats_of(frame), quota_source=quota_source, now=_EPOCH)
    return list(report.findings)
