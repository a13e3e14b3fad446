"""The fleet as upkeep sees it: NodeClaims, Nodes, the pods on them, NodePools, at one moment.

Liveness, garbage collection, restart recovery and disruption all decide from a ``Fleet``
(a frozen snapshot) and ``now``; they act through ``FleetPort``. ``KubeFleet`` implements
the port over the same informer caches and ``Kube`` connection the provisioning loop
uses (``KubeClusterPort.caches`` and ``.kube``): reads never list the API server, writes
go through the connection, so a replica that does not hold the leader lease cannot make
any (its ``LeaderGate`` refuses them).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from provisioner.controller.cluster import ClaimRecord
from provisioner.controller.kubeport import claim_record, is_provisionable
from provisioner.model import manifests
from provisioner.model.errors import InputError
from provisioner.model.kube_port import KubeError, NotFound
from provisioner.model.logvocab import format_time
from provisioner.model.nodepool import NodePool

__all__ = [
    "DISRUPTED_TAINT", "DO_NOT_DISRUPT", "ClaimInfo", "Fleet", "FleetPort", "KubeFleet", "NodeInfo", "PodInfo",
    "PoolInfo", "parse_time",
]

Obj = dict[str, Any]
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
DISRUPTED_TAINT = "karpenter.sh/disrupted"


def parse_time(text: Any) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class ClaimInfo:
    record: ClaimRecord
    created_at: datetime | None = None

    @property
    def name(self) -> str:
        return self.record.name


@dataclass(frozen=True, slots=True)
class NodeInfo:
    name: str
    provider_id: str
    nodepool: str
    ready: bool
    created_at: datetime | None = None
    taints: tuple[str, ...] = ()  # taint keys


@dataclass(frozen=True, slots=True)
class PodInfo:
    """A pod bound to a node: enough to decide whether the node is empty or may be drained."""

    namespace: str
    name: str
    node: str
    daemonset: bool = False
    do_not_disrupt: bool = False
    terminal: bool = False

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class PoolInfo:
    pool: NodePool
    conditions: tuple[Mapping[str, Any], ...] = ()

    @property
    def name(self) -> str:
        return self.pool.name


@dataclass(frozen=True, slots=True)
class Fleet:
    claims: tuple[ClaimInfo, ...] = ()
    nodes: tuple[NodeInfo, ...] = ()
    pods: tuple[PodInfo, ...] = ()
    pools: tuple[PoolInfo, ...] = ()
    pending_pods: int = 0  # provisionable pods, cluster-wide
    by_node: dict[str, tuple[PodInfo, ...]] = field(default_factory=dict, compare=False)

    def pods_on(self, node: str) -> tuple[PodInfo, ...]:
        return self.by_node.get(node, ())

    def pool(self, name: str) -> PoolInfo | None:
        return next((p for p in self.pools if p.name == name), None)


class FleetPort(Protocol):
    """Reads and writes upkeep needs beyond the provisioning loop's ``ClusterPort``."""

    def fleet(self) -> Fleet: ...

    def delete_nodeclaim(self, name: str) -> None: ...

    def update_nodeclaim_status(self, claim: ClaimRecord) -> None: ...

    def delete_node(self, name: str) -> None: ...

    def taint_node(self, name: str, key: str, effect: str) -> None: ...

    def evict_pod(self, namespace: str, name: str) -> None: ...

    def set_nodepool_condition(self, pool: str, type_: str, status: str, reason: str, message: str,
                               now: datetime) -> None: ...

    def event(self, kind: str, namespace: str, name: str, type_: str, reason: str, message: str) -> None: ...


class _Caches(Protocol):
    def objects(self) -> list[Obj]: ...


class _Writes(Protocol):
    def delete_nodeclaim(self, name: str) -> None: ...

    def patch_nodeclaim_status(self, name: str, patch: Obj) -> Obj: ...

    def delete_node(self, name: str) -> None: ...

    def patch_node(self, name: str, patch: Obj) -> Obj: ...

    def patch_nodepool_status(self, name: str, patch: Obj) -> Obj: ...

    def post_event(self, involved: Obj, type_: str, reason: str, message: str) -> None: ...

    def delete(self, resource: Any, name: str, namespace: str | None = None) -> Obj | None: ...


def _pod_info(obj: Obj) -> PodInfo | None:
    meta = obj.get("metadata") or {}
    node = (obj.get("spec") or {}).get("nodeName")
    if not node:
        return None
    owners = meta.get("ownerReferences") or []
    annotations = meta.get("annotations") or {}
    phase = (obj.get("status") or {}).get("phase")
    return PodInfo(
        namespace=str(meta.get("namespace", "default")), name=str(meta.get("name", "")), node=str(node),
        daemonset=any(o.get("kind") in ("DaemonSet", "Node") for o in owners),
        do_not_disrupt=str(annotations.get(DO_NOT_DISRUPT, "")).lower() == "true",
        terminal=phase in ("Succeeded", "Failed") or bool(meta.get("deletionTimestamp")),
    )


def _node_info(obj: Obj) -> NodeInfo:
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                for c in (obj.get("status") or {}).get("conditions") or [])
    return NodeInfo(
        name=str(meta.get("name", "")), provider_id=str(spec.get("providerID", "")),
        nodepool=str((meta.get("labels") or {}).get("karpenter.sh/nodepool", "")), ready=ready,
        created_at=parse_time(meta.get("creationTimestamp")),
        taints=tuple(str(t.get("key", "")) for t in spec.get("taints") or []),
    )


class KubeFleet:
    """``FleetPort`` over informer caches (by plural) and a ``Kube`` connection (``KubeCluster``)."""

    def __init__(self, kube: _Writes, caches: Mapping[str, _Caches]) -> None:
        self.kube = kube
        self.caches = caches

    def _objects(self, plural: str) -> list[Obj]:
        cache = self.caches.get(plural)
        return cache.objects() if cache is not None else []

    def fleet(self) -> Fleet:
        claims = []
        for obj in self._objects("nodeclaims"):
            try:
                claims.append(ClaimInfo(claim_record(obj), parse_time((obj.get("metadata") or {}).get("creationTimestamp"))))
            except (ValueError, TypeError, KeyError):
                continue
        pods: list[PodInfo] = []
        pending = 0
        for obj in self._objects("pods"):
            info = _pod_info(obj)
            if info is not None:
                pods.append(info)
            elif is_provisionable(obj):
                pending += 1
        by_node: dict[str, list[PodInfo]] = {}
        for pod in pods:
            by_node.setdefault(pod.node, []).append(pod)
        pools = []
        for obj in self._objects("nodepools"):
            try:
                pool = manifests.nodepool_from_dict(obj)
            except (InputError, ValueError, KeyError, TypeError):
                continue
            pools.append(PoolInfo(pool, tuple((obj.get("status") or {}).get("conditions") or ())))
        return Fleet(
            claims=tuple(claims), nodes=tuple(_node_info(o) for o in self._objects("nodes")), pods=tuple(pods),
            pools=tuple(pools), pending_pods=pending, by_node={k: tuple(v) for k, v in by_node.items()},
        )

    def delete_nodeclaim(self, name: str) -> None:
        self.kube.delete_nodeclaim(name)

    def update_nodeclaim_status(self, claim: ClaimRecord) -> None:
        with contextlib.suppress(NotFound):  # deleted meanwhile
            self.kube.patch_nodeclaim_status(claim.name, claim.status_patch())

    def delete_node(self, name: str) -> None:
        try:
            self.kube.delete_node(name)
        except NotFound:
            return

    def taint_node(self, name: str, key: str, effect: str) -> None:
        current = next((n for n in self._objects("nodes") if (n.get("metadata") or {}).get("name") == name), None)
        if current is None:
            return
        taints = list((current.get("spec") or {}).get("taints") or [])
        if any(t.get("key") == key for t in taints):
            return
        taints.append({"key": key, "effect": effect})
        patch = {"metadata": {"resourceVersion": (current.get("metadata") or {}).get("resourceVersion")},
                 "spec": {"taints": taints}}
        try:
            self.kube.patch_node(name, patch)
        except KubeError as e:
            if e.status not in (404, 409):
                raise  # a stale cache: the next round patches again

    def evict_pod(self, namespace: str, name: str) -> None:
        from provisioner.kube.connection import PODS

        self.kube.delete(PODS, name, namespace)

    def set_nodepool_condition(self, pool: str, type_: str, status: str, reason: str, message: str,
                               now: datetime) -> None:
        current = next((p for p in self._objects("nodepools") if (p.get("metadata") or {}).get("name") == pool), None)
        if current is None:
            return
        conditions = [dict(c) for c in (current.get("status") or {}).get("conditions") or []]
        existing = next((c for c in conditions if c.get("type") == type_), None)
        if existing is not None and existing.get("status") == status and existing.get("reason") == reason:
            return
        updated = _set(conditions, type_, status, reason, message, now)
        try:
            self.kube.patch_nodepool_status(pool, {"status": {"conditions": updated}})
        except NotFound:
            return

    def event(self, kind: str, namespace: str, name: str, type_: str, reason: str, message: str) -> None:
        api = "karpenter.sh/v1" if kind in ("NodeClaim", "NodePool") else "v1"
        self.kube.post_event({"apiVersion": api, "kind": kind, "name": name, "namespace": namespace},
                             type_, reason, message)


def _set(conditions: list[Obj], type_: str, status: str, reason: str, message: str, now: datetime) -> list[Obj]:
    """Set one NodePool condition; ``lastTransitionTime`` moves only when the status changes."""
    old = next((c for c in conditions if c.get("type") == type_), None)
    stamp = old.get("lastTransitionTime") if old is not None and old.get("status") == status else None
    mine = {"type": type_, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": stamp or format_time(now)}
    return [c for c in conditions if c.get("type") != type_] + [mine]
