"""What every rule shares: the rule shape, the grouping of occurrences, and the common finding.

A rule owns one root cause (or a small family of them). It says which categories it
explains, how occurrences group into distinct causes (its ``key``: the same quota in the
same region is one cause however many times it was hit), and how to word the finding and
its fixes. Everything else a finding carries (pods, claims, times, evidence, whether it was
resolved later) is filled here the same way for every rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from diagnose.correlate import Correlation, Occurrence, owner_of
from diagnose.findings import BLOCKING, INFO, Evidence, Finding
from diagnose.quota import LogQuotaSource, QuotaSource
from diagnose.sizing import vcpus_of

__all__ = [
    "EVIDENCE_LIMIT",
    "Context",
    "Group",
    "Rule",
    "assemble",
    "claims_phrase",
    "fmt_time",
    "lead",
    "plural",
    "sku_phrase",
]

EVIDENCE_LIMIT = 100
_RESOURCE = re.compile(r"/resourceGroups/([^/\s\"'\\]+)/providers/(Microsoft\.\w+/\w+)/([^/\s\"'\\?]+)", re.IGNORECASE)
_RESOURCE_LIMIT = 20


@dataclass(frozen=True, slots=True)
class Context:
    correlation: Correlation
    log_quota: LogQuotaSource
    quota_source: QuotaSource | None = None  # snapshot or live Azure figures, when asked for
    subscription: str = ""  # "" when the input does not show it


@dataclass(frozen=True, slots=True)
class Group:
    category: str
    key: tuple[str, ...]
    occurrences: tuple[Occurrence, ...]
    extra: tuple[Evidence, ...] = ()  # lines that report the same failures again

    @property
    def latest(self) -> Occurrence:
        return self.occurrences[-1]


Explain = Callable[[Finding, Group, Context], None]


@dataclass(frozen=True, slots=True)
class Rule:
    categories: tuple[str, ...]
    key: Callable[[Occurrence], tuple[str, ...]]
    explain: Explain
    severity: str = BLOCKING


def fmt_time(moment: datetime | None) -> str:
    if moment is None:
        return "an unknown time"
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def plural(count: int, word: str, words: str | None = None) -> str:
    return f"{count} {word if count == 1 else (words or word + 's')}"


def _unique(values: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        if value:
            seen.setdefault(value, None)
    return list(seen)


def _resolution(finding: Finding, correlation: Correlation) -> tuple[datetime | None, list[str]]:
    """When the affected pods (or claims, or NodePool) got a node after the last error; pods still waiting."""
    last = finding.last_seen
    pending = [p for p in finding.pods if not _after(correlation.pod_bound.get(p), last)]
    if finding.pods:
        if pending:
            return None, pending
        return max(correlation.pod_bound[p] for p in finding.pods), []
    if finding.nodeclaims:
        times = [correlation.claim_success_after(c, last) for c in finding.nodeclaims]
        if all(times):
            return max(t for t in times if t is not None), []
    if finding.nodepool:
        return correlation.nodepool_success_after(finding.nodepool, last), []
    return None, []


def _after(moment: datetime | None, last: datetime | None) -> bool:
    return moment is not None and (last is None or moment >= last)


def _evidence(group: Group, correlation: Correlation) -> list[Evidence]:
    refs: list[Evidence] = []
    seen: set[tuple[str, int]] = set()

    def add(ref: Evidence) -> None:
        if (ref.file, ref.line) not in seen:
            seen.add((ref.file, ref.line))
            refs.append(ref)

    claims = _unique(o.nodeclaim for o in group.occurrences)
    for name in claims:
        claim = correlation.claims.get(name)
        if claim is None:
            continue
        if claim.batch is not None:
            add(claim.batch.evidence)
        for ref in claim.evidence:
            add(ref)
    for occurrence in group.occurrences:
        add(occurrence.evidence)
    for ref in group.extra:
        add(ref)
    refs.sort(key=lambda r: (r.file, r.line))
    return refs


def _resources(group: Group) -> list[str]:
    """``Microsoft.Compute/virtualMachines/aks-x (resource group rg)`` for each resource the errors name."""
    found: dict[str, None] = {}
    for occurrence in group.occurrences:
        for text in (occurrence.message, occurrence.evidence.text):
            for match in _RESOURCE.finditer(text):
                group_name, kind, name = match.groups()
                found.setdefault(f"{kind}/{name} (resource group {group_name})", None)
                if len(found) >= _RESOURCE_LIMIT:
                    return list(found)
    return list(found)


def assemble(group: Group, rule: Rule, context: Context) -> Finding:
    """The finding of one group: common fields here, wording and fixes by the rule."""
    correlation = context.correlation
    occurrences = group.occurrences
    latest = group.latest
    pods = _unique(p for o in occurrences for p in o.pods)
    pod_count = max([len(pods), *(o.pod_count for o in occurrences)])
    instance_types = _unique(o.instance_type for o in occurrences)
    vcpus = {name: v for name in instance_types if (v := vcpus_of(name, latest.region)) is not None}
    times = [o.time for o in occurrences if o.time is not None]
    evidence = _evidence(group, correlation)
    finding = Finding(
        category=group.category,
        severity=rule.severity,
        summary="",
        pods=pods,
        pod_count=pod_count,
        nodeclaims=_unique(o.nodeclaim for o in occurrences),
        nodepool=next((o.nodepool for o in reversed(occurrences) if o.nodepool), ""),
        instance_types=instance_types,
        instance_type_vcpus=vcpus,
        region=next((o.region for o in reversed(occurrences) if o.region), ""),
        first_seen=min(times) if times else None,
        last_seen=max(times) if times else None,
        occurrences=len(occurrences),
        evidence=evidence[:EVIDENCE_LIMIT],
        evidence_total=len(evidence),
        error_code=latest.code,
        error_message=latest.message,
        workloads=_unique(owner for p in pods if (owner := owner_of(p))),
        zones=_unique(o.zone for o in occurrences),
        capacity_types=_unique(o.capacity_type for o in occurrences),
        resources=_resources(group),
    )
    others = _unique(o.nodepool for o in occurrences if o.nodepool and o.nodepool != finding.nodepool)
    if others:
        finding.details.append("Also NodePool(s): " + ", ".join(others))
    resolved_at, pending = _resolution(finding, correlation)
    finding.pending_pods = pending
    if resolved_at is not None:
        finding.resolved = True
        finding.resolved_at = resolved_at
        finding.severity = INFO
    rule.explain(finding, group, context)
    if finding.resolved:
        finding.details.insert(0, f"Resolved: the affected pods or NodeClaims got a node at {fmt_time(resolved_at)}.")
    return finding


# --- wording shared by the rules -----------------------------------------------------------


def subject(finding: Finding) -> str:
    """Who is affected: "10 pods of default/inflate", "Pod default/web-0", "NodePool general-purpose"."""
    count = finding.pod_count
    if count:
        owners = [w.split(" ", 1)[1] for w in finding.workloads]
        if count == 1 and finding.pods:
            return f"Pod {finding.pods[0]}"
        if len(owners) == 1:
            return f"{plural(count, 'pod')} of {owners[0]}"
        if owners:
            return f"{plural(count, 'pod')} ({', '.join(owners)})"
        return plural(count, "pod")
    if finding.nodeclaims:
        return claims_phrase(finding)
    if finding.nodepool:
        return f"NodePool {finding.nodepool}"
    return "Provisioning"


def lead(finding: Finding) -> str:
    """ "10 pods of default/inflate are Pending" (or "were Pending" once resolved)."""
    who = subject(finding)
    if not finding.pod_count:  # the rule's own words name the NodeClaim or NodePool
        return f"Provisioning {'was' if finding.resolved else 'is'} blocked"
    single = finding.pod_count == 1
    if finding.resolved:
        return f"{who} {'was' if single else 'were'} Pending"
    return f"{who} {'is' if single else 'are'} Pending"


def claims_phrase(finding: Finding) -> str:
    pool = f" (NodePool {finding.nodepool})" if finding.nodepool else ""
    if not finding.nodeclaims:
        return f"NodePool {finding.nodepool}" if finding.nodepool else "the NodeClaim"
    if len(finding.nodeclaims) == 1:
        return f"NodeClaim {finding.nodeclaims[0]}{pool}"
    return f"{len(finding.nodeclaims)} NodeClaims{pool}"


def sku_phrase(finding: Finding, limit: int = 3) -> str:
    names = finding.instance_types
    if not names:
        return "the chosen size"
    parts = []
    for name in names[:limit]:
        vcpus = finding.instance_type_vcpus.get(name)
        parts.append(f"{name} ({vcpus} vCPUs)" if vcpus else name)
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(parts) + more
