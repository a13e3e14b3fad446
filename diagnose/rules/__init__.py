"""Rules: one module per root cause (or close family of causes), each explaining its findings.

``evaluate`` groups the classified occurrences into distinct causes with each rule's key,
lets the rule word the finding, and sorts the findings (blocking first, then by how many
pods they hold back). Two folds keep each cause explained once:

* the same failure logged twice within two seconds for the same NodeClaim (the cloud
  error line, then Karpenter's "failed launching nodeclaim" wrapping it, or the matching
  Event) counts once, and keeps both lines as evidence;
* Karpenter's generic "insufficient capacity" joins the finding of the cloud error that
  caused it (same NodeClaim, or the same NodePool within the five minutes before); only
  when nothing explains it does it become an ``insufficient-capacity`` finding.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import UTC, datetime, timedelta

from diagnose.correlate import Correlation, Occurrence
from diagnose.findings import CATEGORIES, SEVERITY_RANK, Evidence, Finding
from diagnose.quota import LogQuotaSource, QuotaSource
from diagnose.rules import access, capacity, launch, network, nodepool, quota, unknown
from diagnose.rules.base import Context, Group, Rule, assemble

__all__ = ["RULES", "evaluate", "rule_for"]

RULES: tuple[Rule, ...] = (
    quota.RULE,
    *capacity.RULES,
    *network.RULES,
    *access.RULES,
    *launch.RULES,
    *nodepool.RULES,
    unknown.RULE,
)
_BY_CATEGORY = {category: rule for rule in RULES for category in rule.categories}
assert set(_BY_CATEGORY) == set(CATEGORIES), "every category has exactly one rule"

_DUPLICATE_WINDOW = timedelta(seconds=2)
_FOLD_WINDOW = timedelta(minutes=5)
_UNTRACED = ("insufficient-capacity", "unknown-error", "launch-failed")


def rule_for(category: str) -> Rule:
    return _BY_CATEGORY[category]


def _dedupe(occurrences: list[Occurrence]) -> tuple[list[Occurrence], dict[int, list[Evidence]]]:
    """Drop the second report of one failure; its evidence goes to the kept occurrence."""
    kept: list[Occurrence] = []
    extra: dict[int, list[Evidence]] = {}
    last_for: dict[tuple[str, str], int] = {}
    for occurrence in occurrences:
        key = (occurrence.nodeclaim, occurrence.category)
        index = last_for.get(key) if occurrence.nodeclaim else None
        if index is not None:
            previous = kept[index]
            if (
                previous.time is not None
                and occurrence.time is not None
                and occurrence.time - previous.time <= _DUPLICATE_WINDOW
            ):
                extra.setdefault(index, []).append(occurrence.evidence)
                continue
        last_for[key] = len(kept)
        kept.append(occurrence)
    return kept, extra


class _Traced:
    """The occurrences that can explain a generic "insufficient capacity", indexed by
    NodeClaim (the latest one) and by NodePool (in time order, for a binary search)."""

    def __init__(self, traced: list[Occurrence]) -> None:
        self.by_claim: dict[str, Occurrence] = {}
        by_pool: dict[str, list[Occurrence]] = {}
        for cause in traced:
            self.by_claim[cause.nodeclaim] = cause
            if cause.time is not None:
                by_pool.setdefault(cause.nodepool, []).append(cause)
        self.by_pool = {pool: sorted(causes, key=_time_of) for pool, causes in by_pool.items()}  # (stable)
        self.times = {pool: [_time_of(c) for c in causes] for pool, causes in self.by_pool.items()}

    def explaining(self, occurrence: Occurrence) -> Occurrence | None:
        """The latest cause for the same NodeClaim, else for the same NodePool in the five minutes before."""
        if occurrence.nodeclaim and occurrence.nodeclaim in self.by_claim:
            return self.by_claim[occurrence.nodeclaim]
        if not occurrence.nodepool or not occurrence.time:
            return None
        times = self.times.get(occurrence.nodepool, [])
        latest = bisect_right(times, occurrence.time) - 1  # the last cause at or before it
        if latest >= 0 and occurrence.time - times[latest] <= _FOLD_WINDOW:
            return self.by_pool[occurrence.nodepool][latest]
        return None


def _time_of(occurrence: Occurrence) -> datetime:
    assert occurrence.time is not None
    return occurrence.time


def evaluate(
    correlation: Correlation,
    quota_source: QuotaSource | None = None,
    subscription: str = "",
) -> list[Finding]:
    """Every distinct root cause in the correlated input, as findings, most important first."""
    occurrences, extra = _dedupe(correlation.occurrences)
    traced = _Traced([o for o in occurrences if o.category not in _UNTRACED])
    groups: dict[tuple[str, ...], list[Occurrence]] = {}
    group_extra: dict[tuple[str, ...], list[Evidence]] = {}
    for index, occurrence in enumerate(occurrences):
        target = occurrence
        if occurrence.category == "insufficient-capacity":
            cause = traced.explaining(occurrence)
            if cause is not None:
                key = rule_for(cause.category).key(cause)
                group_extra.setdefault(key, []).append(occurrence.evidence)
                continue
        key = rule_for(target.category).key(target)
        groups.setdefault(key, []).append(target)
        group_extra.setdefault(key, []).extend(extra.get(index, []))
    context = Context(
        correlation=correlation,
        log_quota=LogQuotaSource(correlation.occurrences),
        quota_source=quota_source,
        subscription=subscription or correlation.subscription,
    )
    findings: list[Finding] = []
    for key, members in groups.items():
        category = members[0].category
        group = Group(category, key, tuple(members), tuple(group_extra.get(key, ())))
        finding = assemble(group, rule_for(category), context)
        findings.append(finding)
    never = datetime.max.replace(tzinfo=UTC)
    findings.sort(key=lambda f: (SEVERITY_RANK.get(f.severity, 3), -f.pod_count, f.first_seen or never))
    return findings

