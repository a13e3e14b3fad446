"""What is left to spend: vCPU quota per scope and NodePool limits, debited as nodes are planned.

On-demand nodes spend the regional total (``cores``) and their VM family's quota; spot nodes
spend ``lowPriorityCores``. NodePool limits are spent in capacity (millicores, bytes, nodes).
A quota-blind ledger (Karpenter's behaviour) tracks the NodePool limits only. Budgets the
snapshot does not know are unlimited. ``copies(option, pool)`` is how many more nodes of an
option fit every budget at once: a division per budget, never a loop over nodes.
"""

from __future__ import annotations

from collections.abc import Mapping

from provisioner.model.quota import REGIONAL_QUOTA, SPOT_QUOTA
from provisioner.scheduling.candidates import Option

__all__ = ["UNLIMITED", "Ledger", "PoolLimit"]

UNLIMITED = 1 << 62

PoolLimit = tuple[int | None, int | None, int | None]  # millicores, bytes, nodes left (None: no limit)


class Ledger:
    def __init__(self, quotas: Mapping[str, int] | None, limits: Mapping[str, PoolLimit]) -> None:
        self.quota_aware = quotas is not None
        self.left: dict[str, int] = dict(quotas or {})
        self.limits: dict[str, list[int | None]] = {name: list(v) for name, v in limits.items()}

    def copy(self) -> Ledger:
        other = Ledger(None, {})
        other.quota_aware = self.quota_aware
        other.left = dict(self.left)
        other.limits = {k: list(v) for k, v in self.limits.items()}
        return other

    def adopt(self, other: Ledger) -> None:
        """Take over another copy's balances (the plan that was kept)."""
        self.left = other.left
        self.limits = other.limits

    def scopes(self, option: Option) -> tuple[str, ...]:
        """The quotas a node of this option spends."""
        if option.capacity_type == "spot":
            return (SPOT_QUOTA,)
        return (REGIONAL_QUOTA, option.family)

    @property
    def unlimited(self) -> bool:
        """True when no budget applies at all (nothing to check)."""
        return not (self.quota_aware and self.left) and not self.limits

    def copies(self, option: Option, pool: str) -> int:
        """How many more nodes of ``option`` every budget allows."""
        if not self.limits and not (self.quota_aware and self.left):
            return UNLIMITED
        n = UNLIMITED
        if self.quota_aware and option.vcpus > 0:
            left = self.left
            for scope in self.scopes(option):
                have = left.get(scope)
                if have is not None:
                    n = min(n, have // option.vcpus)
        limit = self.limits.get(pool)
        if limit is not None:
            cpu, mem, nodes = limit
            if cpu is not None:
                n = min(n, cpu // option.cap_cpu if option.cap_cpu else UNLIMITED)
            if mem is not None:
                n = min(n, mem // option.cap_mem if option.cap_mem else UNLIMITED)
            if nodes is not None:
                n = min(n, nodes)
        return max(n, 0)

    def take(self, option: Option, pool: str, count: int = 1) -> None:
        if self.quota_aware:
            for scope in self.scopes(option):
                if scope in self.left:
                    self.left[scope] -= option.vcpus * count
        limit = self.limits.get(pool)
        if limit is not None:
            for i, spent in enumerate((option.cap_cpu, option.cap_mem, 1)):
                value = limit[i]
                if value is not None:
                    limit[i] = value - spent * count

    def give(self, option: Option, pool: str, count: int = 1) -> None:
        self.take(option, pool, -count)

    def vcpu_budget(self, capacity_type: str, pool: str, families: set[str]) -> int | None:
        """The tightest vCPU budget options of one capacity type share; None when unlimited."""
        budget: int | None = None
        if self.quota_aware:
            if capacity_type == "spot":
                budget = self.left.get(SPOT_QUOTA)
            else:
                budget = self.left.get(REGIONAL_QUOTA)
                if budget is None and families and all(f in self.left for f in families):
                    budget = sum(max(self.left[f], 0) for f in families)
        limit = self.limits.get(pool)
        if limit is not None and limit[0] is not None:
            cpus = max(limit[0], 0) // 1000
            budget = cpus if budget is None else min(budget, cpus)
        return None if budget is None else max(budget, 0)
