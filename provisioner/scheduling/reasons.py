"""Why pods wait: compatibility reasons, and quota or limit shortfalls with their numbers.

Compatibility reasons are noted per NodePool while planning (taints not tolerated,
requirements that conflict, no size left, a pod larger than any size). When several pools
were tried, the most specific one wins: too-large, then no-compatible-instance-type, then
requirements, then taints.

Budget reasons are worked out after planning: the pods still waiting are planned again
with no budgets at all (the cheapest mix), which says how many vCPUs (or how much NodePool
capacity) they still need per scope. A scope whose need exceeds what is left is a
shortfall; the message names the quota, its limit, usage, what was left, what this plan
uses, what is still needed and the limit that would place them all
(``usage + in flight + planned + still needed``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from provisioner.model.quantity import format_cpu, format_memory
from provisioner.model.quota import REGIONAL_QUOTA, SPOT_QUOTA
from provisioner.scheduling.ledger import Ledger
from provisioner.scheduling.packing import Bin
from provisioner.scheduling.plan import Reason, ReasonCode
from provisioner.scheduling.snapshot import QuotaLeft

__all__ = ["Needs", "best_note", "budget_reason"]

_RANK = {
    ReasonCode.TOO_LARGE: 0,
    ReasonCode.NO_COMPATIBLE_INSTANCE_TYPE: 1,
    ReasonCode.REQUIREMENTS: 2,
    ReasonCode.TAINTS: 3,
}


def best_note(notes: list[Reason]) -> Reason:
    """The most specific compatibility reason among those noted (first pool wins ties)."""
    if not notes:
        return Reason(ReasonCode.NO_NODEPOOL, "no NodePool exists to create a node from")
    return min(enumerate(notes), key=lambda t: (_RANK.get(t[1].code, 9), t[0]))[1]


@dataclass(slots=True)
class Needs:
    """What the waiting pods would need with no budgets: vCPUs per quota, capacity per pool."""

    quota: dict[str, int] = field(default_factory=dict)
    pool: dict[str, list[int]] = field(default_factory=dict)  # cpu, memory, nodes

    def merge(self, other: Needs) -> None:
        for k, v in other.quota.items():
            self.quota[k] = self.quota.get(k, 0) + v
        for k, pv in other.pool.items():
            mine = self.pool.setdefault(k, [0, 0, 0])
            for i in range(3):
                mine[i] += pv[i]

    def add(self, bins: list[Bin], pool: str) -> None:
        for b in bins:
            o, n = b.option, b.copies
            scopes = (SPOT_QUOTA,) if o.capacity_type == "spot" else (REGIONAL_QUOTA, o.family)
            for s in scopes:
                self.quota[s] = self.quota.get(s, 0) + o.vcpus * n
            p = self.pool.setdefault(pool, [0, 0, 0])
            p[0] += o.cap_cpu * n
            p[1] += o.cap_mem * n
            p[2] += n


def _quota_label(name: str) -> tuple[ReasonCode, str]:
    if name == REGIONAL_QUOTA:
        return ReasonCode.QUOTA_REGIONAL, f"regional vCPU quota {name}"
    if name == SPOT_QUOTA:
        return ReasonCode.QUOTA_SPOT, f"spot vCPU quota {name}"
    return ReasonCode.QUOTA_FAMILY, f"VM family vCPU quota {name}"


def _quota_reason(q: QuotaLeft, final_left: int, need: int, pods: int, pool: str) -> Reason:
    code, label = _quota_label(q.name)
    used = q.left - final_left
    flight = f", {q.in_flight} in flight" if q.in_flight else ""
    new_limit = q.usage + q.in_flight + used + need
    noun = "pod still needs" if pods == 1 else "pods still need"
    message = (
        f"{label}: {q.left} of {q.limit} left (usage {q.usage}{flight}), this plan uses {used}; "
        f"{pods} {noun} {need} vCPUs; a limit of at least {new_limit} would place them all"
    )
    return Reason(code, message, pool, q.name, q.limit, q.usage, q.left, need, new_limit)


def _limit_reason(pool: str, index: int, limit: int, start_left: int, final_left: int, need: int,
                  pods: int) -> Reason:
    resource = ("cpu", "memory", "nodes")[index]
    show = (format_cpu, format_memory, str)[index]
    used = start_left - final_left
    new_limit = limit - final_left + need
    noun = "pod still needs" if pods == 1 else "pods still need"
    message = (
        f"nodepool {pool} limit {resource}: {show(max(start_left, 0))} of {show(limit)} left, this plan uses "
        f"{show(used)}; {pods} {noun} {show(need)}; a limit of at least {show(new_limit)} would place them all"
    )
    return Reason(ReasonCode.NODEPOOL_LIMIT, message, pool, resource, limit, limit - start_left,
                  max(start_left, 0), need, new_limit)


def budget_reason(
    group_needs: Needs,
    total: Needs,
    pods: int,
    pool: str,
    quotas: dict[str, QuotaLeft],
    pool_limits: dict[str, tuple[tuple[int | None, ...], tuple[int | None, ...]]],
    ledger: Ledger,
) -> Reason:
    """The shortfall that keeps a group's waiting pods from being placed, with its numbers.

    ``pool_limits`` maps a pool to (limits, left before planning) as (cpu, memory, nodes).
    """
    order = [REGIONAL_QUOTA, *sorted(k for k in group_needs.quota if k not in (REGIONAL_QUOTA, SPOT_QUOTA))]
    order.append(SPOT_QUOTA)
    fallback: Reason | None = None
    if ledger.quota_aware:
        for name in order:
            need = group_needs.quota.get(name, 0)
            q = quotas.get(name)
            if not need or q is None:
                continue
            final_left = ledger.left.get(name, q.left)
            reason = _quota_reason(q, final_left, total.quota.get(name, need), pods, pool)
            if total.quota.get(name, need) > final_left:
                return reason
            fallback = fallback or reason
    for p, (limits, start) in pool_limits.items():
        needs = group_needs.pool.get(p)
        if needs is None:
            continue
        current = ledger.limits.get(p, [None, None, None])
        for i in range(3):
            limit, begin, final = limits[i], start[i], current[i]
            if limit is None or begin is None or final is None:
                continue
            need = total.pool.get(p, needs)[i]
            reason = _limit_reason(p, i, limit, begin, final, need, pods)
            if need > final:
                return reason
            fallback = fallback or reason
    if fallback is not None:
        return fallback
    return Reason(ReasonCode.QUOTA_REGIONAL, "no size fits the vCPU quota and NodePool limits left", pool)
