"""The controller's ``ClusterPort`` over the Kubernetes port (``model.kube_port.Kube``) and informer caches.

Reads come from caches (anything with ``objects() -> list[dict]``: the Kubernetes adapter's
informers, or a list in a test), so a pass never lists the API server; writes go through
``Kube``: NodeClaims are created and their status patched (merge patch on the status
subresource), Nodes are patched with the cached ``resourceVersion`` (a stale view gets a
409 and the next tick tries again), Events are posted through the adapter's recorder.

The raw JSON objects become model values here (``provisioner.model.manifests``); an object
that cannot be read is skipped and counted, never fatal.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol

from provisioner.controller.cluster import ClaimRecord, ClusterView, NodeRecord
from provisioner.model import manifests
from provisioner.model.errors import InputError
from provisioner.model.kube_port import Kube, KubeError, NotFound
from provisioner.model.pod import Pod
from provisioner.model.resources import Resources

__all__ = ["ZONE_LABEL", "Cache", "KubeClusterPort", "is_provisionable"]

Obj = dict[str, Any]
ZONE_LABEL = "karpenter.azure.com/zone"  # the offering zone a claim was launched for ("1", "2", "3")
_API = {"Pod": "v1", "Node": "v1", "NodeClaim": "karpenter.sh/v1", "NodePool": "karpenter.sh/v1"}


class Cache(Protocol):
    def objects(self) -> list[Obj]: ...


def is_provisionable(obj: Mapping[str, Any]) -> bool:
    """PodScheduled=False/Unschedulable, unbound, not DaemonSet- or Node-owned, not being deleted."""
    meta = obj.get("metadata") or {}
    if meta.get("deletionTimestamp") or (obj.get("spec") or {}).get("nodeName"):
        return False
    if any(o.get("kind") in ("DaemonSet", "Node") for o in meta.get("ownerReferences") or []):
        return False
    if (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled":
            return bool(c.get("status") == "False" and c.get("reason") == "Unschedulable")
    return False


def _time(text: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


def claim_record(obj: Obj) -> ClaimRecord:
    meta = obj.get("metadata") or {}
    labels = dict(meta.get("labels") or {})
    status = obj.get("status") or {}
    conditions = tuple(c for c in status.get("conditions") or () if isinstance(c, dict))
    launched = next((c for c in conditions if c.get("type") == "Launched" and c.get("status") == "True"), None)
    requests = ((obj.get("spec") or {}).get("resources") or {}).get("requests") or {}
    try:
        resources = Resources.from_requests(requests)
    except ValueError:
        resources = Resources()
    return ClaimRecord(
        name=str(meta.get("name", "")),
        nodepool=labels.get("karpenter.sh/nodepool", ""),
        instance_type=labels.get("node.kubernetes.io/instance-type", ""),
        capacity_type=labels.get("karpenter.sh/capacity-type", "on-demand"),
        zone=labels.get(ZONE_LABEL, ""),
        requests=resources,
        provider_id=str(status.get("providerID", "")),
        node_name=str(status.get("nodeName", "")),
        conditions=conditions,
        labels={k: v for k, v in labels.items() if k != ZONE_LABEL},
        deleting=bool(meta.get("deletionTimestamp")),
        launched_at=_time(launched.get("lastTransitionTime")) if launched else None,
    )


class KubeClusterPort:
    def __init__(self, kube: Kube, caches: Mapping[str, Cache]) -> None:
        """``caches`` by plural: pods, nodes, nodeclaims, nodepools, aksnodeclasses, daemonsets."""
        self.kube = kube
        self.caches = caches
        self.unreadable = 0

    def _objects(self, plural: str) -> list[Obj]:
        cache = self.caches.get(plural)
        return cache.objects() if cache is not None else []

    def pending_keys(self) -> list[str]:
        return [f"{(p.get('metadata') or {}).get('namespace', 'default')}/{(p.get('metadata') or {}).get('name', '')}"
                for p in self._objects("pods") if is_provisionable(p)]

    def _read(self, convert: Any, obj: Obj) -> Any:
        try:
            return convert(obj)
        except (InputError, ValueError, KeyError, TypeError):
            self.unreadable += 1
            return None

    def view(self) -> ClusterView:
        requested: dict[str, Resources] = {}
        pending: list[Pod] = []
        for p in self._objects("pods"):
            node = (p.get("spec") or {}).get("nodeName")
            phase = (p.get("status") or {}).get("phase")
            if node and phase not in ("Succeeded", "Failed"):
                pod = self._read(manifests.pod_from_dict, p)
                if pod is not None:
                    requested[node] = requested.get(node, Resources()) + pod.requests
            elif is_provisionable(p):
                pod = self._read(manifests.pod_from_dict, p)
                if pod is not None:
                    pending.append(pod)
        nodes = []
        for n in self._objects("nodes"):
            name = (n.get("metadata") or {}).get("name", "")
            node = self._read(lambda o, name=name: manifests.node_from_dict(o, requested=requested.get(name, Resources())), n)
            if node is not None:
                nodes.append(NodeRecord(node, str((n.get("spec") or {}).get("providerID", "")),
                                        tuple((n.get("spec") or {}).get("taints") or ())))
        pools = [self._read(manifests.nodepool_from_dict, o) for o in self._objects("nodepools")]
        classes = [self._read(manifests.nodeclass_from_dict, o) for o in self._objects("aksnodeclasses")]
        daemons = [self._read(manifests.daemonset_pod, o) for o in self._objects("daemonsets")]
        return ClusterView(
            pending=tuple(pending),
            nodes=tuple(nodes),
            claims=tuple(claim_record(o) for o in self._objects("nodeclaims")),
            nodepools=tuple(p for p in pools if p is not None),
            nodeclasses=tuple(c for c in classes if c is not None),
            daemonset_pods=tuple(d for d in daemons if d is not None),
        )

    # --- writes ----------------------------------------------------------------------
    def create_nodeclaim(self, claim: ClaimRecord, requirements: list[dict[str, Any]], taints: list[dict[str, Any]],
                         node_class: str) -> None:
        labels = dict(claim.labels)
        if claim.zone:
            labels[ZONE_LABEL] = claim.zone
        body = {
            "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": claim.name, "labels": labels},
            "spec": {
                "requirements": requirements,
                "resources": {"requests": claim.requests.to_requests()},
                "taints": taints,
                "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": node_class},
            },
        }
        self.kube.create_nodeclaim(body)
        self.update_nodeclaim_status(claim)

    def update_nodeclaim_status(self, claim: ClaimRecord) -> None:
        with contextlib.suppress(NotFound):  # deleted meanwhile
            self.kube.patch_nodeclaim_status(claim.name, claim.status_patch())

    def delete_nodeclaim(self, name: str) -> None:
        self.kube.delete_nodeclaim(name)

    def patch_node(self, name: str, labels: dict[str, str], remove_taints: list[str]) -> None:
        current = next((n for n in self._objects("nodes") if (n.get("metadata") or {}).get("name") == name), None)
        patch: Obj = {"metadata": {"labels": dict(labels)}}
        if current is not None:
            patch["metadata"]["resourceVersion"] = (current.get("metadata") or {}).get("resourceVersion")
            if remove_taints:
                taints = [t for t in (current.get("spec") or {}).get("taints") or [] if t.get("key") not in remove_taints]
                patch["spec"] = {"taints": taints if taints else None}
        try:
            self.kube.patch_node(name, patch)
        except KubeError as e:
            if e.status != 409:
                raise  # a conflict means the cache was stale: the next tick recomputes the patch

    def event(self, kind: str, namespace: str, name: str, type_: str, reason: str, message: str) -> None:
        involved = {"apiVersion": _API.get(kind, "v1"), "kind": kind, "name": name, "namespace": namespace}
        self.kube.post_event(involved, type_, reason, message)
