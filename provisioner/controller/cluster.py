"""What the controller reads from and writes to the cluster, in its own words.

``ClusterView`` is a frozen gathering of the informer caches at one moment; ``ClusterPort``
is the narrow set of reads and writes the controller needs. The Kubernetes adapter
(``provisioner.kube``) is wrapped to this shape by ``provisioner.controller.kubeport``;
unit tests use a small in-memory fake.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from provisioner.model.nodepool import AKSNodeClass, Node, NodePool
from provisioner.model.pod import Pod
from provisioner.model.resources import Resources

__all__ = ["ClaimRecord", "ClusterPort", "ClusterView", "NodeRecord"]


@dataclass(frozen=True, slots=True)
class NodeRecord:
    """A Node with what registration needs beyond the planner's ``Node``."""

    node: Node
    provider_id: str
    raw_taints: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class ClaimRecord:
    """A NodeClaim as stored in the cluster."""

    name: str
    nodepool: str
    instance_type: str
    capacity_type: str
    zone: str
    requests: Resources
    provider_id: str = ""
    node_name: str = ""
    conditions: tuple[dict[str, Any], ...] = ()
    labels: dict[str, str] = field(default_factory=dict)
    deleting: bool = False
    launched_at: datetime | None = None  # when the VM create returned

    def status_of(self, type_: str) -> str:
        for c in self.conditions:
            if c.get("type") == type_:
                return str(c.get("status", "Unknown"))
        return "Unknown"

    def status_patch(self) -> dict[str, Any]:
        """The NodeClaim ``status`` this record says, as a merge patch of the status subresource."""
        status: dict[str, Any] = {"conditions": [dict(c) for c in self.conditions]}
        if self.provider_id:
            status["providerID"] = self.provider_id
        if self.node_name:
            status["nodeName"] = self.node_name
        return {"status": status}


@dataclass(frozen=True, slots=True)
class ClusterView:
    pending: tuple[Pod, ...]  # provisionable pods
    nodes: tuple[NodeRecord, ...]
    claims: tuple[ClaimRecord, ...]
    nodepools: tuple[NodePool, ...]
    nodeclasses: tuple[AKSNodeClass, ...]
    daemonset_pods: tuple[Pod, ...]  # DaemonSet pod templates (one per DaemonSet) for overhead


class ClusterPort(Protocol):
    def view(self) -> ClusterView: ...

    def pending_keys(self) -> list[str]:
        """``namespace/name`` of every provisionable pod now (cheap: read from the cache)."""
        ...

    def create_nodeclaim(self, claim: ClaimRecord, requirements: list[dict[str, Any]], taints: list[dict[str, Any]],
                         node_class: str) -> None: ...

    def update_nodeclaim_status(self, claim: ClaimRecord) -> None: ...

    def delete_nodeclaim(self, name: str) -> None: ...

    def patch_node(self, name: str, labels: dict[str, str], remove_taints: list[str]) -> None:
        """Merge ``labels`` into the Node's and remove the taints with these keys (a patch, not a replace)."""
        ...

    def event(self, kind: str, namespace: str, name: str, type_: str, reason: str, message: str) -> None: ...
