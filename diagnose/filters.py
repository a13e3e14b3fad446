"""Filters: narrow a diagnosis to a time window, some pods, NodePools, NodeClaims or categories.

The time window (``--since``, ``--until``) cuts the input before correlation, so a cause
outside the window is not seen at all. Times are ISO 8601 (``2023-11-24T15:00:00Z``; no
zone means UTC) or relative to now (``90s``, ``15m``, ``2h``, ``1d``, ``1h30m``). The object
filters keep the findings that concern a match: pods (``default/inflate-*``, a pod name,
or a workload name such as ``inflate``), NodePools and NodeClaims (shell-style patterns),
and categories (exact names from the fixed vocabulary). Exit codes follow the findings
that remain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase

import polars as pl

from diagnose.findings import CATEGORIES, Finding
from provisioner.model.errors import InputError

__all__ = ["Filters", "parse_categories", "parse_time"]

_RELATIVE = re.compile(r"^(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def parse_time(text: str, now: datetime, flag: str = "--since") -> datetime:
    """ISO 8601 (UTC when no zone is given) or a duration before ``now`` (``2h``, ``1h30m``)."""
    value = text.strip()
    match = _RELATIVE.match(value)
    if value and match and any(match.groups()):
        weeks, days, hours, minutes, seconds = (int(g or 0) for g in match.groups())
        return now - timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes, seconds=seconds)
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InputError(
            f"{flag} {text!r}: not a time; use ISO 8601 (2023-11-24T15:00:00Z) or a duration such as 90s, 15m, 2h, 1d"
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def parse_categories(values: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Repeatable or comma-separated category names, validated against the vocabulary."""
    names: list[str] = []
    for value in values:
        for part in value.split(","):
            name = part.strip()
            if not name:
                continue
            if name not in CATEGORIES:
                raise InputError(f"--category {name!r}: unknown category; known: {', '.join(CATEGORIES)}")
            if name not in names:
                names.append(name)
    return tuple(names)


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


@dataclass(frozen=True, slots=True)
class Filters:
    since: datetime | None = None
    until: datetime | None = None
    pods: tuple[str, ...] = field(default=())
    nodepools: tuple[str, ...] = field(default=())
    nodeclaims: tuple[str, ...] = field(default=())
    categories: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "pods", _split(self.pods))
        object.__setattr__(self, "nodepools", _split(self.nodepools))
        object.__setattr__(self, "nodeclaims", _split(self.nodeclaims))
        object.__setattr__(self, "categories", parse_categories(self.categories))
        if self.since and self.until and self.since > self.until:
            raise InputError(f"--since {self.since.isoformat()} is after --until {self.until.isoformat()}")

    @property
    def active(self) -> bool:
        return bool(self.since or self.until or self.pods or self.nodepools or self.nodeclaims or self.categories)

    def describe(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        if self.since:
            out["since"] = [self.since.isoformat()]
        if self.until:
            out["until"] = [self.until.isoformat()]
        for name, values in (
            ("pod", self.pods),
            ("nodepool", self.nodepools),
            ("nodeclaim", self.nodeclaims),
            ("category", self.categories),
        ):
            if values:
                out[name] = list(values)
        return out

    def window(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Rows inside [since, until]; rows without a time stay (they cannot be placed)."""
        condition = pl.lit(True)
        if self.since is not None:
            condition = condition & (pl.col("time").is_null() | (pl.col("time") >= self.since))
        if self.until is not None:
            condition = condition & (pl.col("time").is_null() | (pl.col("time") <= self.until))
        return frame.filter(condition) if (self.since or self.until) else frame

    def keeps(self, finding: Finding) -> bool:
        if self.categories and finding.category not in self.categories:
            return False
        if self.nodepools and not any(fnmatchcase(finding.nodepool, p) for p in self.nodepools):
            return False
        if self.nodeclaims and not any(fnmatchcase(c, p) for c in finding.nodeclaims for p in self.nodeclaims):
            return False
        return not self.pods or any(_pod_matches(finding, pattern) for pattern in self.pods)


def _pod_matches(finding: Finding, pattern: str) -> bool:
    for pod in finding.pods:
        name = pod.rpartition("/")[2]
        if fnmatchcase(pod, pattern) or fnmatchcase(name, pattern):
            return True
    for workload in finding.workloads:  # "Deployment default/inflate"
        full = workload.split(" ", 1)[-1]
        if pattern in (full, full.rpartition("/")[2]):
            return True
    return False
