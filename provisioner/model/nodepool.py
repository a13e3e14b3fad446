"""NodePools, the NodeClaims made from them, the AKSNodeClass they point at, and Nodes.

A ``NodePool`` (``karpenter.sh/v1``) bounds what may be created: requirements on node labels
(well-known and ``karpenter.azure.com/sku-*``), taints put on every node, startup taints,
resource ``limits`` on the sum of its nodes' capacity, a ``weight`` (higher is tried first)
and a disruption policy. A ``NodeClaim`` is one node being asked for: its requests (pods
plus DaemonSet overhead), requirements, the instance-type options ordered by price, the
chosen size, capacity type, zone and lifecycle status. A ``Node`` is one that already
exists, with what it can still take.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from provisioner.model.requirements import NODEPOOL, Requirements
from provisioner.model.resources import Resources
from provisioner.model.taints import Taint

__all__ = [
    "AKSNodeClass",
    "Budget",
    "Disruption",
    "Limits",
    "Node",
    "NodeClaim",
    "NodeClaimStatus",
    "NodeClassRef",
    "NodePool",
]


@dataclass(frozen=True, slots=True)
class NodeClassRef:
    name: str = "default"
    kind: str = "AKSNodeClass"
    group: str = "karpenter.azure.com"


@dataclass(frozen=True, slots=True)
class Budget:
    nodes: str = "10%"
    schedule: str = ""
    duration: str = ""
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Disruption:
    consolidation_policy: str = "WhenEmptyOrUnderutilized"
    consolidate_after: str = "0s"
    budgets: tuple[Budget, ...] = (Budget(),)


@dataclass(frozen=True, slots=True)
class Limits:
    """``spec.limits``: caps on the summed *capacity* of a NodePool's nodes; None is no cap."""

    cpu_m: int | None = None
    memory: int | None = None
    nodes: int | None = None

    def __bool__(self) -> bool:
        return self.cpu_m is not None or self.memory is not None or self.nodes is not None


@dataclass(frozen=True, slots=True)
class NodePool:
    name: str
    requirements: Requirements = Requirements()
    labels: tuple[tuple[str, str], ...] = ()
    taints: tuple[Taint, ...] = ()
    startup_taints: tuple[Taint, ...] = ()
    limits: Limits = Limits()
    weight: int = 0
    disruption: Disruption = Disruption()
    node_class_ref: NodeClassRef = NodeClassRef()
    expire_after: str = "720h"

    @property
    def label_map(self) -> dict[str, str]:
        """Labels every node of this pool carries: template labels plus ``karpenter.sh/nodepool``."""
        out = dict(self.labels)
        out[NODEPOOL] = self.name
        return out


@dataclass(frozen=True, slots=True)
class AKSNodeClass:
    name: str
    image_family: str = "Ubuntu2204"
    os_disk_size_gb: int = 128
    max_pods: int | None = None
    vnet_subnet_id: str = ""
    tags: tuple[tuple[str, str], ...] = ()


class NodeClaimStatus:
    """Where a NodeClaim is in its life."""

    PLANNED = "planned"
    LAUNCHED = "launched"
    REGISTERED = "registered"
    INITIALIZED = "initialized"
    FAILED = "failed"
    DELETING = "deleting"
    IN_FLIGHT = (PLANNED, LAUNCHED, REGISTERED)


@dataclass(frozen=True, slots=True)
class NodeClaim:
    name: str
    nodepool: str
    requests: Resources
    requirements: Requirements = Requirements()
    instance_types: tuple[str, ...] = ()  # options, cheapest first
    instance_type: str = ""  # the chosen (or launched) size
    capacity_type: str = "on-demand"
    zone: str = ""  # "" for any zone
    status: str = NodeClaimStatus.PLANNED
    taints: tuple[Taint, ...] = ()
    startup_taints: tuple[Taint, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    node_name: str = ""
    provider_id: str = ""
    created_at: datetime | None = None
    allocatable: Resources | None = None

    @property
    def size(self) -> str:
        """The launched size, else the first option."""
        return self.instance_type or (self.instance_types[0] if self.instance_types else "")


@dataclass(frozen=True, slots=True)
class Node:
    """An existing node: its labels, taints, allocatable and what its pods already request."""

    name: str
    allocatable: Resources
    requested: Resources = Resources()
    labels: tuple[tuple[str, str], ...] = ()
    taints: tuple[Taint, ...] = ()
    ready: bool = True
    unschedulable: bool = False
    label_map: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "label_map", dict(self.labels))

    @property
    def free(self) -> Resources:
        return (self.allocatable - self.requested).clamp()

    @property
    def nodepool(self) -> str:
        return self.label_map.get(NODEPOOL, "")
