"""Everything the planner may look at, frozen at one moment.

The controller (or ``karp-provisioner plan``) gathers pods, nodes, in-flight NodeClaims,
NodePools, the instance-type catalog, the quota read from Azure, the offerings marked
unavailable after failures, the DaemonSet overhead per NodePool and the time, then hands
the ``Snapshot`` to ``provisioner.scheduling.solver.plan``. Nothing in the planner reads
anything else.

Quota headroom is the limit less usage, less the vCPUs of NodeClaims whose VMs the usage
figure cannot include yet (planned, or created after the quota was read). On-demand sizes
count against the regional total (``cores``) and their VM family; spot sizes count
against ``lowPriorityCores`` only. A quota the snapshot does not list is not limited.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from provisioner.model.catalog import Catalog
from provisioner.model.instance_type import InstanceType
from provisioner.model.nodepool import AKSNodeClass, Node, NodeClaim, NodeClaimStatus, NodePool
from provisioner.model.pod import Pod
from provisioner.model.quota import REGIONAL_QUOTA, SPOT_QUOTA, QuotaSnapshot
from provisioner.model.resources import Resources

__all__ = ["QuotaLeft", "Snapshot"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class QuotaLeft:
    """One quota as the planner budgets it: limit, usage, in-flight creates, what is left."""

    name: str
    limit: int
    usage: int
    in_flight: int = 0

    @property
    def left(self) -> int:
        return max(self.limit - self.usage - self.in_flight, 0)


@dataclass(frozen=True, slots=True)
class Snapshot:
    pods: tuple[Pod, ...]
    nodepools: tuple[NodePool, ...]
    catalog: Catalog
    nodes: tuple[Node, ...] = ()
    in_flight: tuple[NodeClaim, ...] = ()
    quota: QuotaSnapshot | None = None
    unavailable: frozenset[tuple[str, str, str]] = frozenset()  # (capacity type, size, zone)
    daemonset_overhead: Mapping[str, Resources] = field(default_factory=dict)  # by NodePool name
    node_classes: Mapping[str, AKSNodeClass] = field(default_factory=dict)
    now: datetime = _EPOCH

    def overhead(self, nodepool: str) -> Resources:
        return self.daemonset_overhead.get(nodepool, Resources())

    def max_pods(self, pool: NodePool) -> int | None:
        node_class = self.node_classes.get(pool.node_class_ref.name)
        return node_class.max_pods if node_class else None

    def _claims_not_in_usage(self) -> list[tuple[NodeClaim, InstanceType]]:
        read_at = self.quota.read_at if self.quota else None
        out: list[tuple[NodeClaim, InstanceType]] = []
        for claim in self.in_flight:
            if claim.status not in NodeClaimStatus.IN_FLIGHT:
                continue
            counted = (
                claim.status != NodeClaimStatus.PLANNED
                and claim.created_at is not None
                and read_at is not None
                and claim.created_at <= read_at
            )
            it = self.catalog.get(claim.size) if claim.size else None
            if not counted and it is not None:
                out.append((claim, it))
        return out

    def quotas(self) -> dict[str, QuotaLeft]:
        """Every quota of the snapshot with the in-flight creates it does not count yet."""
        if self.quota is None:
            return {}
        extra: dict[str, int] = {}
        for claim, it in self._claims_not_in_usage():
            if claim.capacity_type == "spot":
                extra[SPOT_QUOTA] = extra.get(SPOT_QUOTA, 0) + it.vcpus
            else:
                extra[REGIONAL_QUOTA] = extra.get(REGIONAL_QUOTA, 0) + it.vcpus
                extra[it.family] = extra.get(it.family, 0) + it.vcpus
        return {
            name: QuotaLeft(name, q.limit, q.usage, extra.get(name, 0)) for name, q in self.quota.items.items()
        }

    def nodepool_usage(self, pool: str) -> tuple[int, int, int]:
        """(millicores, bytes, nodes) of capacity a NodePool's nodes and in-flight claims hold."""
        cpu = memory = nodes = 0
        claimed: set[str] = set()
        for claim in self.in_flight:
            if claim.nodepool != pool or claim.status not in NodeClaimStatus.IN_FLIGHT:
                continue
            it = self.catalog.get(claim.size) if claim.size else None
            if it is not None:
                cpu += it.millicores
                memory += it.memory_bytes
            nodes += 1
            if claim.node_name:
                claimed.add(claim.node_name)
        for node in self.nodes:
            if node.nodepool != pool or node.name in claimed:
                continue
            it = self.catalog.get(node.label_map.get("node.kubernetes.io/instance-type", ""))
            cpu += it.millicores if it else node.allocatable.cpu_m
            memory += it.memory_bytes if it else node.allocatable.memory
            nodes += 1
        return cpu, memory, nodes
