"""``KubeCluster``: the controller's view of the cluster (implements ``kube_port.Kube``).

Raw dicts in and out, requests through ``RawApi`` (the official client's REST layer
with orjson), typed ``KubeError``s for refusals. Every write first asks the
``LeaderGate`` (when one is given), so a replica that is not the leader, or has just
lost its lease, cannot change anything. Events go through an ``EventRecorder``
(deduplicated, rate limited, posted off the calling thread).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubernetes import client

from provisioner.kube.connection import (
    AKSNODECLASSES,
    NODECLAIMS,
    NODEPOOLS,
    NODES,
    PODS,
    RawApi,
    Resource,
    api_client,
)
from provisioner.kube.events import EventRecorder
from provisioner.kube.informer import Informer
from provisioner.kube.leader import LeaderGate
from provisioner.model.kube_port import Kube, NotFound

__all__ = ["MERGE", "STRATEGIC", "KubeCluster"]

Obj = dict[str, Any]
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"


class KubeCluster:
    def __init__(self, api: client.ApiClient, *, gate: LeaderGate | None = None, recorder: EventRecorder | None = None,
                 request_timeout: float = 30.0) -> None:
        self.api = api
        self.raw = RawApi(api, request_timeout=request_timeout)
        self.gate = gate
        self.recorder = recorder or EventRecorder(self.raw, allowed=(lambda: gate.is_leader) if gate else None)

    @classmethod
    def connect(cls, kubeconfig: str | None = None, context: str | None = None, *, gate: LeaderGate | None = None) -> KubeCluster:
        return cls(api_client(kubeconfig, context), gate=gate)

    def close(self) -> None:
        self.recorder.close()
        self.api.close()  # type: ignore[no-untyped-call]

    # ---- generic verbs ---------------------------------------------------------------------------
    def _guard(self, action: str) -> None:
        if self.gate is not None:
            self.gate.check(action)

    def get(self, resource: Resource, name: str, namespace: str | None = None) -> Obj | None:
        try:
            answer: Obj = self.raw.call("GET", resource.path(namespace, name))
            return answer
        except NotFound:
            return None

    def list_objects(self, resource: Resource, namespace: str | None = None, *, label_selector: str | None = None,
             field_selector: str | None = None) -> list[Obj]:
        answer = self.raw.call("GET", resource.path(namespace),
                               query={"labelSelector": label_selector, "fieldSelector": field_selector})
        return list((answer or {}).get("items") or [])

    def create(self, resource: Resource, obj: Obj, namespace: str | None = None) -> Obj:
        self._guard(f"create {resource.title}")
        body = {"apiVersion": resource.api_version, "kind": resource.kind, **obj}
        ns = namespace or (obj.get("metadata") or {}).get("namespace")
        answer: Obj = self.raw.call("POST", resource.path(ns), body=body)
        return answer

    def replace(self, resource: Resource, obj: Obj, *, subresource: str | None = None) -> Obj:
        meta = obj.get("metadata") or {}
        self._guard(f"update {resource.title}")
        answer: Obj = self.raw.call("PUT", resource.path(meta.get("namespace"), meta["name"], subresource), body=obj)
        return answer

    def patch(self, resource: Resource, name: str, patch: Obj | list[Obj], namespace: str | None = None, *,
              subresource: str | None = None, patch_type: str = MERGE) -> Obj:
        self._guard(f"patch {resource.title}")
        answer: Obj = self.raw.call("PATCH", resource.path(namespace, name, subresource), body=patch, content_type=patch_type)
        return answer

    def delete(self, resource: Resource, name: str, namespace: str | None = None) -> Obj | None:
        """Request deletion; None when it was already gone."""
        self._guard(f"delete {resource.title}")
        try:
            answer: Obj = self.raw.call("DELETE", resource.path(namespace, name))
            return answer
        except NotFound:
            return None

    def informer(self, resource: Resource, **options: Any) -> Informer:
        """An Informer over this connection (not started)."""
        return Informer(self.raw, resource, **options)

    # ---- the Kube port ----------------------------------------------------------------------------
    def create_nodeclaim(self, claim: Obj) -> Obj:
        return self.create(NODECLAIMS, claim)

    def get_nodeclaim(self, name: str) -> Obj | None:
        return self.get(NODECLAIMS, name)

    def list_nodeclaims(self, label_selector: str | None = None) -> list[Obj]:
        return self.list_objects(NODECLAIMS, label_selector=label_selector)

    def patch_nodeclaim(self, name: str, patch: Obj) -> Obj:
        return self.patch(NODECLAIMS, name, patch)

    def patch_nodeclaim_status(self, name: str, patch: Obj) -> Obj:
        return self.patch(NODECLAIMS, name, patch, subresource="status")

    def delete_nodeclaim(self, name: str) -> None:
        self.delete(NODECLAIMS, name)

    def list_nodepools(self) -> list[Obj]:
        return self.list_objects(NODEPOOLS)

    def patch_nodepool_status(self, name: str, patch: Obj) -> Obj:
        return self.patch(NODEPOOLS, name, patch, subresource="status")

    def list_nodeclasses(self) -> list[Obj]:
        return self.list_objects(AKSNODECLASSES)

    def list_nodes(self, label_selector: str | None = None) -> list[Obj]:
        return self.list_objects(NODES, label_selector=label_selector)

    def create_node(self, node: Obj) -> Obj:
        return self.create(NODES, node)

    def patch_node(self, name: str, patch: Obj) -> Obj:
        return self.patch(NODES, name, patch, patch_type=STRATEGIC)

    def delete_node(self, name: str) -> None:
        self.delete(NODES, name)

    def list_pods(self, namespace: str | None = None, field_selector: str | None = None,
                  label_selector: str | None = None) -> list[Obj]:
        return self.list_objects(PODS, namespace, label_selector=label_selector, field_selector=field_selector)

    def pod_logs(self, namespace: str, name: str, container: str | None = None, previous: bool = False,
                 since_seconds: int | None = None) -> str:
        query = {"container": container, "previous": "true" if previous else None, "sinceSeconds": since_seconds}
        answer = self.raw.call("GET", PODS.path(namespace, name, "log"), query=query)
        return answer if isinstance(answer, str) else ("" if answer is None else str(answer))

    def post_event(self, involved: Obj, type_: str, reason: str, message: str) -> None:
        self.recorder.record(involved, type_, reason, message)


if TYPE_CHECKING:

    def _implements_the_port(cluster: KubeCluster) -> Kube:
        return cluster
