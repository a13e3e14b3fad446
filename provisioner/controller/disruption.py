"""Disruption: removing empty nodes and replacing expired ones, within budgets.

Two methods, checked every 10 s, for NodeClaims that are initialised (their Node is Ready):

- **Emptiness**: a node with no pods other than DaemonSet (or terminal) pods for the
  NodePool's ``spec.disruption.consolidateAfter`` is removed (both policies,
  ``WhenEmpty`` and ``WhenEmptyOrUnderutilized``, include it; ``Never`` turns it off). The
  timer starts when this process first sees the node empty, and no node counts as empty
  while provisionable pods are waiting (they may be on their way to it).
- **Expiration**: a claim older than the NodePool's ``spec.template.spec.expireAfter``
  (``720h`` by default; ``Never`` turns it off) is replaced: its node is tainted, its pods
  are evicted (their controllers recreate them, the provisioner plans for them) and the
  claim is deleted with its VM.

Guards, both methods alike:

- *budgets* (``spec.disruption.budgets``): for each NodePool and reason, the number of
  nodes being disrupted at once never exceeds the smallest budget that applies (``nodes``
  as a count, or a percentage of the pool's nodes rounded up; a budget lists the
  ``reasons`` it applies to, ``Empty`` or ``Expired``, or all when it lists none). A budget
  with a ``schedule`` (cron, UTC) applies for its ``duration`` after each time the schedule
  fires, and not otherwise; a schedule or duration that cannot be read keeps the budget
  always active (the safe reading: it only ever restricts more). Without budgets,
  Karpenter's default applies: 10%.
- *do-not-disrupt*: a node running a pod annotated ``karpenter.sh/do-not-disrupt: "true"``
  is left alone.

``plan`` is pure: a ``Fleet``, ``now`` and the emptiness timers in; the nodes to disrupt,
the ones held back (and why), and the updated timers out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from provisioner.controller.fleet import DISRUPTED_TAINT, DO_NOT_DISRUPT, ClaimInfo, Fleet, PodInfo
from provisioner.controller.liveness import started_at
from provisioner.model.cron import Schedule, ScheduleError
from provisioner.model.nodepool import Budget, NodePool

__all__ = ["EMPTY", "EXPIRED", "Candidate", "DisruptionPlan", "allowed", "parse_duration", "plan"]

EMPTY = "Empty"
EXPIRED = "Expired"
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_duration(text: str) -> timedelta | None:
    """Go-style durations (``720h``, ``30s``, ``1h30m``, ``0s``); None for ``Never`` (or anything unreadable)."""
    value = (text or "").strip()
    if not value or value.lower() == "never":
        return None
    parts = _PART.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        return None
    return timedelta(seconds=sum(float(n) * _UNITS[u] for n, u in parts))


@dataclass(frozen=True, slots=True)
class Candidate:
    claim: str
    node: str
    nodepool: str
    reason: str  # Empty | Expired
    pods: tuple[PodInfo, ...] = ()  # what must be evicted (DaemonSet pods excluded)


@dataclass(frozen=True, slots=True)
class DisruptionPlan:
    disrupt: tuple[Candidate, ...] = ()
    held: tuple[tuple[str, str], ...] = ()  # (node, why)
    empty_since: dict[str, datetime] = field(default_factory=dict)


def _in_force(budget: Budget, now: datetime | None) -> bool:
    if not budget.schedule or now is None:
        return True
    duration = parse_duration(budget.duration) if budget.duration else None
    try:
        schedule = Schedule.parse(budget.schedule)
    except ScheduleError:
        return True
    return duration is None or schedule.active(now, duration)


def allowed(pool: NodePool, reason: str, total: int, now: datetime | None = None) -> int:
    """How many of the pool's ``total`` nodes may be disrupted at once for ``reason`` at ``now``."""
    limits: list[int] = []
    for budget in pool.disruption.budgets:
        if budget.reasons and reason not in budget.reasons:
            continue
        if not _in_force(budget, now):
            continue
        text = budget.nodes.strip()
        try:
            if text.endswith("%"):
                limits.append(math.ceil(total * float(text[:-1]) / 100.0))
            else:
                limits.append(int(text))
        except ValueError:
            limits.append(0)  # an unreadable budget blocks (the safe reading)
    return max(0, min(limits)) if limits else total


def _evictable(pods: tuple[PodInfo, ...]) -> tuple[PodInfo, ...]:
    return tuple(p for p in pods if not p.daemonset and not p.terminal)


def plan(fleet: Fleet, now: datetime, empty_since: Mapping[str, datetime]) -> DisruptionPlan:
    nodes = {n.name: n for n in fleet.nodes}
    timers: dict[str, datetime] = {}
    held: list[tuple[str, str]] = []
    wanted: list[tuple[ClaimInfo, str, tuple[PodInfo, ...], datetime]] = []
    totals: dict[str, int] = {}
    busy: dict[str, int] = {}
    for info in fleet.claims:
        record = info.record
        node = nodes.get(record.node_name) if record.node_name else None
        if node is None:
            continue
        totals[record.nodepool] = totals.get(record.nodepool, 0) + 1
        if record.deleting or DISRUPTED_TAINT in node.taints:
            busy[record.nodepool] = busy.get(record.nodepool, 0) + 1
            continue
        if record.status_of("Initialized") != "True" or not node.ready:
            continue
        pool = fleet.pool(record.nodepool)
        if pool is None:
            continue
        pods = _evictable(fleet.pods_on(node.name))
        expire = parse_duration(pool.pool.expire_after)
        born = started_at(info)
        if expire is not None and born is not None and now - born >= expire:
            wanted.append((info, EXPIRED, pods, born))
            continue
        if pods:
            continue
        since = empty_since.get(node.name, now)
        timers[node.name] = since
        after = parse_duration(pool.pool.disruption.consolidate_after)
        if after is None:
            continue
        if fleet.pending_pods:
            held.append((node.name, "provisionable pods are waiting"))
            continue
        if now - since >= after:
            wanted.append((info, EMPTY, pods, since))
    wanted.sort(key=lambda w: (w[1] != EXPIRED, w[3], w[0].name))
    used: dict[str, int] = {}
    out: list[Candidate] = []
    for info, reason, pods, _ in wanted:
        record = info.record
        if any(p.do_not_disrupt for p in pods):
            held.append((record.node_name, f"a pod has {DO_NOT_DISRUPT}"))
            continue
        pool = fleet.pool(record.nodepool)
        assert pool is not None
        in_progress = busy.get(record.nodepool, 0) + used.get(record.nodepool, 0)
        if in_progress >= allowed(pool.pool, reason, totals.get(record.nodepool, 0), now):
            held.append((record.node_name, f"disruption budget of nodepool {record.nodepool} reached"))
            continue
        used[record.nodepool] = used.get(record.nodepool, 0) + 1
        out.append(Candidate(record.name, record.node_name, record.nodepool, reason, pods))
    return DisruptionPlan(tuple(out), tuple(held), timers)
