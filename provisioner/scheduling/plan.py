"""The planner's answer: NodeClaims to create, pods placed on nodes that exist, and why the rest wait.

Every pod of the snapshot ends up in exactly one of three places:

- ``Plan.nodeclaims``: a new NodeClaim holds it (with the instance-type options ordered by
  price, the chosen first option, capacity type, zone and hourly price);
- ``Plan.placements``: it fits on an existing node or an in-flight NodeClaim;
- ``Plan.unplaced``: it cannot be placed now, with a ``Reason``: a stable ``code`` and a
  message that carries the numbers (quota limit, usage, what is left, what is still
  needed, the limit that would place it).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from provisioner.model.nodepool import NodeClaim, NodeClaimStatus
from provisioner.model.requirements import (
    CAPACITY_TYPE,
    INSTANCE_TYPE,
    NODEPOOL,
    ZONE,
    Requirement,
    Requirements,
)
from provisioner.model.resources import Resources

__all__ = [
    "InstanceOption",
    "NewNodeClaim",
    "Placement",
    "Plan",
    "Reason",
    "ReasonCode",
    "Unplaced",
]


class ReasonCode(StrEnum):
    QUOTA_REGIONAL = "quota-regional"
    QUOTA_FAMILY = "quota-family"
    QUOTA_SPOT = "quota-spot"
    NODEPOOL_LIMIT = "nodepool-limit"
    NO_COMPATIBLE_INSTANCE_TYPE = "no-compatible-instance-type"
    REQUIREMENTS = "requirements"
    TAINTS = "taints"
    TOO_LARGE = "too-large"
    NO_NODEPOOL = "no-nodepool"


@dataclass(frozen=True, slots=True)
class Reason:
    """Why a pod waits. Quota and limit reasons carry their figures (vCPUs, or the limit's unit)."""

    code: ReasonCode
    message: str
    nodepool: str = ""
    quota: str = ""  # "cores", "lowPriorityCores", "standardDLSv5Family", or the limited resource
    limit: int | None = None
    usage: int | None = None
    left: int | None = None
    needed: int | None = None
    new_limit: int | None = None

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"code": str(self.code), "message": self.message}
        for name in ("nodepool", "quota", "limit", "usage", "left", "needed", "new_limit"):
            value = getattr(self, name)
            if value not in (None, ""):
                out[name] = value
        return out


@dataclass(frozen=True, slots=True)
class InstanceOption:
    name: str
    capacity_type: str
    price_per_hour: float
    vcpus: int


@dataclass(frozen=True, slots=True)
class NewNodeClaim:
    name: str
    nodepool: str
    instance_type: str
    capacity_type: str
    zone: str  # "" means any zone the size is offered in
    zones: tuple[str, ...]
    pods: tuple[str, ...]  # namespace/name
    requests: Resources  # pods plus DaemonSet overhead, as Karpenter writes them
    options: tuple[InstanceOption, ...]  # compatible sizes, cheapest first (at most 600)
    price_per_hour: float
    vcpus: int
    quota_family: str

    def to_nodeclaim(self) -> NodeClaim:
        """The NodeClaim object to create, with the planned size's options as requirements."""
        names = tuple(dict.fromkeys(o.name for o in self.options))
        reqs = [
            Requirement(NODEPOOL, "In", (self.nodepool,)),
            Requirement(INSTANCE_TYPE, "In", names or (self.instance_type,)),
            Requirement(CAPACITY_TYPE, "In", (self.capacity_type,)),
        ]
        if self.zones:
            reqs.append(Requirement(ZONE, "In", (self.zone,) if self.zone else self.zones))
        return NodeClaim(
            name=self.name,
            nodepool=self.nodepool,
            requests=self.requests,
            requirements=Requirements(tuple(reqs)),
            instance_types=names,
            instance_type=self.instance_type,
            capacity_type=self.capacity_type,
            zone=self.zone,
            status=NodeClaimStatus.PLANNED,
        )


@dataclass(frozen=True, slots=True)
class Placement:
    pod: str
    target: str  # node or NodeClaim name
    kind: str  # "node" or "nodeclaim"


@dataclass(frozen=True, slots=True)
class Unplaced:
    pod: str
    reason: Reason


@dataclass(frozen=True, slots=True)
class Plan:
    nodeclaims: tuple[NewNodeClaim, ...]
    placements: tuple[Placement, ...]
    unplaced: tuple[Unplaced, ...]
    quota_aware: bool = True

    @property
    def cost_per_hour(self) -> float:
        return round(sum(c.price_per_hour for c in self.nodeclaims), 6)

    @property
    def vcpus(self) -> int:
        return sum(c.vcpus for c in self.nodeclaims)

    @property
    def pods_on_new_nodes(self) -> int:
        return sum(len(c.pods) for c in self.nodeclaims)

    @property
    def pods_placed(self) -> int:
        return self.pods_on_new_nodes + len(self.placements)

    def reasons(self) -> dict[ReasonCode, int]:
        """How many pods wait for each reason."""
        out: dict[ReasonCode, int] = {}
        for u in self.unplaced:
            out[u.reason.code] = out.get(u.reason.code, 0) + 1
        return out

    def to_dict(self) -> dict[str, object]:
        """The JSON form ``karp-provisioner plan --json`` prints (without timing)."""
        return {
            "nodeclaims": [
                {
                    "name": c.name,
                    "nodepool": c.nodepool,
                    "instance_type": c.instance_type,
                    "capacity_type": c.capacity_type,
                    "zone": c.zone or "any",
                    "pods": list(c.pods),
                    "price_per_hour": c.price_per_hour,
                    "vcpus": c.vcpus,
                    "quota_family": c.quota_family,
                    "requests": c.requests.to_requests(),
                    "instance_types": [o.name for o in c.options],
                }
                for c in self.nodeclaims
            ],
            "placements": [{"pod": p.pod, "target": p.target, "kind": p.kind} for p in self.placements],
            "unplaced": [
                {"pod": u.pod, "reason": u.reason.message, "code": str(u.reason.code), "detail": u.reason.to_dict()}
                for u in self.unplaced
            ],
            "cost_per_hour": self.cost_per_hour,
            "quota_aware": self.quota_aware,
        }
