"""Findings for the records seen so far, from karp-diagnose's analysis."""

from __future__ import annotations

import polars as pl

from diagnose.findings import Finding

__all__ = ["findings_for"]


def findings_for(frame: pl.DataFrame) -> list[Finding]:
    """karp-diagnose's findings over ``frame`` (the normalised table); [] when there is nothing to say."""
    try:
        from diagnose import api
    except ImportError:
        return []
    analyse = getattr(api, "analyse", None)
    if analyse is None:
        return []
    return list(analyse(frame).findings)
