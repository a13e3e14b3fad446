"""DaemonSet overhead: what the DaemonSets that would run on a NodePool's nodes request.

Every new node carries one pod of each DaemonSet whose tolerations cover the pool's taints
and whose node-selector terms are compatible with the pool's requirements. Their summed
requests (including one pod slot each) are reserved on every planned node, and added to
the NodeClaim's requests, as Karpenter does.
"""

from __future__ import annotations

from collections.abc import Iterable

from provisioner.model.nodepool import NodePool
from provisioner.model.pod import Pod
from provisioner.model.requirements import Requirements
from provisioner.model.resources import Resources
from provisioner.model.taints import tolerates_all

__all__ = ["daemonset_overhead", "overhead_by_pool"]


def _runs_on(ds: Pod, pool: NodePool) -> bool:
    if not tolerates_all(pool.taints, ds.tolerations):
        return False
    fixed = Requirements.from_labels(pool.label_map)
    return any(term.compatible(pool.requirements) and term.only(fixed.keys()).matches(pool.label_map)
               for term in ds.terms)


def daemonset_overhead(daemonsets: Iterable[Pod], pool: NodePool) -> Resources:
    """The summed requests of the DaemonSet pods that would run on every node of ``pool``."""
    total = Resources()
    for ds in daemonsets:
        if _runs_on(ds, pool):
            total = total + ds.requests
    return total


def overhead_by_pool(daemonsets: Iterable[Pod], pools: Iterable[NodePool]) -> dict[str, Resources]:
    ds = tuple(daemonsets)
    return {pool.name: daemonset_overhead(ds, pool) for pool in pools}
