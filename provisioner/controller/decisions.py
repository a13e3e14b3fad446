"""What one planning pass decided, in the controller's terms.

The planner (``provisioner.scheduling``) returns its own ``Plan``; ``planning.py`` turns it
into these values so the acting half of the controller does not depend on the planner's
internals:

- ``ClaimDecision``: a new NodeClaim to create: its NodePool, the instance types that fit
  (cheapest first; the first available one is launched), capacity type, zone, requests and
  the pods it is for;
- ``Nomination``: pods that will land on a node or a NodeClaim already in flight;
- ``Blocked``: pods that cannot be placed now, and why. When a vCPU quota is the reason,
  ``quota`` carries its figures and the limit that would place them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from provisioner.model.errors import describe_quota_block
from provisioner.model.instance_type import InstanceType
from provisioner.model.nodepool import NodePool
from provisioner.model.pod import Pod
from provisioner.model.resources import Resources

__all__ = ["Blocked", "ClaimDecision", "Decisions", "Nomination", "QuotaBlock"]


@dataclass(frozen=True, slots=True)
class ClaimDecision:
    nodepool: NodePool
    options: tuple[InstanceType, ...]  # cheapest first
    capacity_type: str
    zone: str  # "1", "2", "3", or "" for any allowed zone
    requests: Resources
    pods: tuple[Pod, ...]
    requirements: tuple[dict[str, Any], ...] = ()
    name: str = ""  # set by the planner when it names claims, else by the controller
    zones: tuple[str, ...] = ()  # zones allowed ("1", "2", "3"); () = any the size is offered in


@dataclass(frozen=True, slots=True)
class Nomination:
    target: str  # "nodeclaim/<name>" or "node/<name>"
    pods: tuple[Pod, ...]


@dataclass(frozen=True, slots=True)
class QuotaBlock:
    scope: str  # regional | family | spot
    name: str  # cores, standardDSv5Family, lowPriorityCores
    region: str
    limit: int
    usage: int
    required: int  # vCPUs the blocked pods need on top of the usage
    new_limit: int  # the limit that would place them
    left: int | None = None  # what is left after creates in flight (None: limit - usage)

    @property
    def free(self) -> int:
        return max(self.limit - self.usage, 0) if self.left is None else self.left

    def as_fields(self) -> dict[str, Any]:
        return {"scope": self.scope, "name": self.name, "region": self.region, "limit": self.limit,
                "usage": self.usage, "required": self.required, "newLimit": self.new_limit}

    def describe(self) -> str:
        return describe_quota_block(self.scope, self.name, self.region, self.limit, self.usage, self.required,
                                    self.new_limit, left=self.free,
                                    in_flight=max(self.limit - self.usage - self.free, 0))


@dataclass(frozen=True, slots=True)
class Blocked:
    pods: tuple[Pod, ...]
    reason: str  # human text
    nodepool: str = ""
    quota: QuotaBlock | None = None
    nodepool_limit: bool = False


@dataclass(frozen=True, slots=True)
class Decisions:
    claims: tuple[ClaimDecision, ...] = ()
    nominations: tuple[Nomination, ...] = ()
    blocked: tuple[Blocked, ...] = ()
    compatible: dict[str, int] = field(default_factory=dict)  # nodepool -> compatible instance types
