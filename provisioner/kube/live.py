"""What ``karp-diagnose --live`` reads from a cluster, in one call.

``collect()`` gathers, read-only:

- the logs of every container of every Karpenter or karp-provisioner pod in the
  namespace (all replicas; the previous container too when it restarted), each
  named ``<namespace>/<pod>/<container>`` (``…/<container>/previous`` for the
  previous one);
- Events, as raw dicts shaped like ``kubectl get events -o json`` items;
- NodeClaims (with their conditions) and NodePools;
- Pending pods, cluster-wide.

A refused call raises ``Forbidden`` naming the verb and resource (so the RBAC fix is
obvious); a cluster with neither Karpenter nor karp raises ``NotInstalled``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from provisioner.kube.cluster import KubeCluster
from provisioner.kube.connection import EVENTS, NODECLAIMS, NODEPOOLS, PODS
from provisioner.model.kube_port import KubeError, NotFound

__all__ = ["CONTROLLER_SELECTORS", "LiveCollection", "NotInstalled", "collect", "collect_from"]

Obj = dict[str, Any]
CONTROLLER_SELECTORS = ("app.kubernetes.io/name=karpenter", "app.kubernetes.io/name=karp-provisioner", "app=karpenter")


class NotInstalled(KubeError):
    """Neither Karpenter nor karp-provisioner runs in the cluster (or in that namespace)."""


@dataclass(frozen=True, slots=True)
class LiveCollection:
    logs: dict[str, str]  # "<namespace>/<pod>/<container>[/previous]" -> text
    events: list[Obj]
    nodeclaims: list[Obj]
    nodepools: list[Obj]
    pending_pods: list[Obj]
    controller_pods: list[Obj]
    namespace: str
    collected_at: datetime
    notes: list[str] = field(default_factory=list)  # what could not be read, and why


def _is_controller(pod: Obj) -> bool:
    name = pod["metadata"]["name"]
    labels = pod["metadata"].get("labels") or {}
    return (name.startswith(("karpenter", "karp-provisioner", "karp-"))
            or labels.get("app.kubernetes.io/name") in ("karpenter", "karp-provisioner")
            or labels.get("app") in ("karpenter", "karp-provisioner"))


def _event_time(event: Obj) -> datetime | None:
    stamp = event.get("lastTimestamp") or event.get("eventTime") or (event.get("series") or {}).get("lastObservedTime") \
        or event.get("firstTimestamp") or (event.get("metadata") or {}).get("creationTimestamp")
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return None


def collect(kubeconfig: str | None, context: str | None, namespace: str = "karpenter", selector: str | None = None,
            since_seconds: int | None = None) -> LiveCollection:
    """Read logs, Events, NodeClaims, NodePools and Pending pods from the cluster."""
    cluster = KubeCluster.connect(kubeconfig, context)
    try:
        return collect_from(cluster, namespace, selector, since_seconds)
    finally:
        cluster.api.close()  # type: ignore[no-untyped-call]


def collect_from(cluster: KubeCluster, namespace: str = "karpenter", selector: str | None = None,
                 since_seconds: int | None = None) -> LiveCollection:
    notes: list[str] = []
    now = datetime.now(UTC)
    if selector:
        pods = cluster.list_objects(PODS, namespace, label_selector=selector)
    else:
        pods = [p for p in cluster.list_objects(PODS, namespace) if _is_controller(p)]
    try:
        nodeclaims = cluster.list_objects(NODECLAIMS)
        nodepools = cluster.list_objects(NODEPOOLS)
        has_crds = True
    except NotFound:
        nodeclaims, nodepools, has_crds = [], [], False
        notes.append("the NodeClaim/NodePool resources (karpenter.sh/v1) are not installed")
    if not pods and not has_crds:
        raise NotInstalled(f"no Karpenter or karp-provisioner in this cluster: no matching pods in namespace {namespace!r}"
                           f"{f' (selector {selector!r})' if selector else ''} and no karpenter.sh custom resources")
    if not pods:
        notes.append(f"no Karpenter or karp-provisioner pods in namespace {namespace!r}"
                     f"{f' matching {selector!r}' if selector else ''}")
    logs: dict[str, str] = {}
    for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
        name = pod["metadata"]["name"]
        restarts = {s.get("name"): int(s.get("restartCount") or 0) for s in (pod.get("status") or {}).get("containerStatuses") or []}
        for container in (pod.get("spec") or {}).get("containers") or []:
            cname = container["name"]
            source = f"{namespace}/{name}/{cname}"
            if restarts.get(cname, 0) > 0:
                try:
                    logs[f"{source}/previous"] = cluster.pod_logs(namespace, name, cname, previous=True, since_seconds=since_seconds)
                except KubeError as e:
                    if e.status == 403:
                        raise
                    notes.append(f"{source}/previous: {e}")
            try:
                logs[source] = cluster.pod_logs(namespace, name, cname, since_seconds=since_seconds)
            except KubeError as e:
                if e.status == 403:
                    raise
                notes.append(f"{source}: {e}")
    events = cluster.list_objects(EVENTS)
    if since_seconds is not None:
        cutoff = now - timedelta(seconds=since_seconds)
        events = [e for e in events if (_event_time(e) or now) >= cutoff]
    events.sort(key=lambda e: (_event_time(e) or now, (e.get("metadata") or {}).get("name", "")))
    pending = cluster.list_objects(PODS, field_selector="status.phase=Pending")
    return LiveCollection(logs=logs, events=events, nodeclaims=nodeclaims, nodepools=nodepools, pending_pods=pending,
                          controller_pods=pods, namespace=namespace, collected_at=now, notes=notes)
