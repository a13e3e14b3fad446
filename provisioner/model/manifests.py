"""Kubernetes objects as plain dicts (parsed YAML or JSON) turned into model values.

Pure conversion, shared by ``karp-provisioner plan`` (files) and the Kubernetes adapter
(objects read from the API server). Understood kinds: ``Pod``; ``Deployment``,
``ReplicaSet`` and ``StatefulSet`` (their replicas become that many pods, named as the
controllers name them: ``<deployment>-<template hash>-<5 chars>``, ``<replicaset>-<5 chars>``,
``<statefulset>-<ordinal>``, deterministically); ``DaemonSet`` (one template pod, for the
DaemonSet overhead); ``NodePool``; ``AKSNodeClass``; ``Node``; and ``List`` of those. Other
kinds are skipped and reported.

A pod's effective requests are those of the scheduler: the sum over containers (requests,
else limits), at least the largest init container, plus ``spec.overhead``. Bad input raises
``InputError`` naming the document and the field, e.g.
``pods.yaml document 2 (Deployment default/inflate): spec.template.spec.containers[0].resources.requests.cpu: invalid quantity 'x'``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from provisioner.model.errors import InputError
from provisioner.model.nodepool import AKSNodeClass, Budget, Disruption, Limits, Node, NodeClassRef, NodePool
from provisioner.model.pod import DAEMONSET, Pod, frozen_map
from provisioner.model.quantity import QuantityError, parse_count, parse_cpu, parse_memory
from provisioner.model.requirements import Requirement, Requirements
from provisioner.model.resources import Resources
from provisioner.model.taints import Taint, Toleration

__all__ = [
    "Manifests",
    "from_documents",
    "node_from_dict",
    "nodeclass_from_dict",
    "nodepool_from_dict",
    "pod_from_dict",
    "pods_from_workload",
]

_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet Kubernetes uses for generated name suffixes


def _suffix(seed: str, length: int) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_SAFE[b % len(_SAFE)] for b in digest[:length])


class _Doc:
    """A document being read: where it came from, to name it in errors."""

    def __init__(self, where: str, doc: Mapping[str, Any]) -> None:
        self.where = where
        self.doc = doc

    def fail(self, path: str, problem: str) -> InputError:
        return InputError(f"{self.where}: {path}: {problem}")

    def map(self, value: Any, path: str) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected a mapping, got {type(value).__name__}")
        return value

    def list(self, value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list, got {type(value).__name__}")
        return value

    def str_map(self, value: Any, path: str) -> dict[str, str]:
        return {str(k): "" if v is None else str(v) for k, v in self.map(value, path).items()}

    def int(self, value: Any, path: str, default: int) -> int:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise self.fail(path, f"expected an integer, got {value!r}")
        try:
            return int(value)
        except ValueError:
            raise self.fail(path, f"expected an integer, got {value!r}") from None


_NAMESPACED = ("Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")


def _describe(where: str, doc: Mapping[str, Any]) -> str:
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
    name = meta.get("name", "?") if isinstance(meta, Mapping) else "?"
    ns = meta.get("namespace") if isinstance(meta, Mapping) else None
    kind = doc.get("kind", "?")
    if not ns and kind in _NAMESPACED:
        ns = "default"
    return f"{where} ({kind} {ns + '/' if ns else ''}{name})"


def _time(d: _Doc, value: Any, path: str) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise d.fail(path, f"not an RFC 3339 time: {value!r}") from None


def _resources(d: _Doc, value: Any, path: str) -> Resources:
    out = Resources()
    for key, raw in d.map(value, path).items():
        try:
            if key == "cpu":
                out = Resources(parse_cpu(raw), out.memory, out.pods, out.ephemeral_storage)
            elif key == "memory":
                out = Resources(out.cpu_m, parse_memory(raw), out.pods, out.ephemeral_storage)
            elif key == "pods":
                out = Resources(out.cpu_m, out.memory, parse_count(raw), out.ephemeral_storage)
            elif key == "ephemeral-storage":
                out = Resources(out.cpu_m, out.memory, out.pods, parse_memory(raw))
        except QuantityError as e:
            raise d.fail(f"{path}.{key}", str(e)) from None
    return out


def _container_requests(d: _Doc, container: Any, path: str) -> Resources:
    res = d.map(d.map(container, path).get("resources"), f"{path}.resources")
    requests = _resources(d, res.get("requests"), f"{path}.resources.requests")
    limits = _resources(d, res.get("limits"), f"{path}.resources.limits")
    given = d.map(res.get("requests"), f"{path}.resources.requests")
    return Resources(
        requests.cpu_m if "cpu" in given else limits.cpu_m,
        requests.memory if "memory" in given else limits.memory,
        0,
        requests.ephemeral_storage if "ephemeral-storage" in given else limits.ephemeral_storage,
    )


def _pod_requests(d: _Doc, spec: Mapping[str, Any], path: str) -> Resources:
    total = Resources()
    for i, c in enumerate(d.list(spec.get("containers"), f"{path}.containers")):
        total = total + _container_requests(d, c, f"{path}.containers[{i}]")
    for i, c in enumerate(d.list(spec.get("initContainers"), f"{path}.initContainers")):
        r = _container_requests(d, c, f"{path}.initContainers[{i}]")
        total = Resources(max(total.cpu_m, r.cpu_m), max(total.memory, r.memory), 0,
                          max(total.ephemeral_storage, r.ephemeral_storage))
    overhead = _resources(d, spec.get("overhead"), f"{path}.overhead")
    return Resources(total.cpu_m + overhead.cpu_m, total.memory + overhead.memory, 1,
                     total.ephemeral_storage + overhead.ephemeral_storage)


def _requirements(d: _Doc, value: Any, path: str) -> Requirements:
    items: list[Requirement] = []
    for i, expr in enumerate(d.list(value, path)):
        e = d.map(expr, f"{path}[{i}]")
        values = [str(v) for v in d.list(e.get("values"), f"{path}[{i}].values")]
        min_values = e.get("minValues")
        try:
            items.append(Requirement(str(e.get("key", "")), str(e.get("operator", "")), tuple(values),
                                     int(min_values) if min_values is not None else None))
        except ValueError as err:
            raise d.fail(f"{path}[{i}]", str(err)) from None
        if not e.get("key"):
            raise d.fail(f"{path}[{i}].key", "missing")
    return Requirements(tuple(items))


def _taints(d: _Doc, value: Any, path: str) -> tuple[Taint, ...]:
    out = []
    for i, t in enumerate(d.list(value, path)):
        m = d.map(t, f"{path}[{i}]")
        try:
            out.append(Taint(str(m.get("key", "")), str(m.get("effect", "")), str(m.get("value") or "")))
        except ValueError as err:
            raise d.fail(f"{path}[{i}]", str(err)) from None
    return tuple(out)


def _tolerations(d: _Doc, value: Any, path: str) -> tuple[Toleration, ...]:
    out = []
    for i, t in enumerate(d.list(value, path)):
        m = d.map(t, f"{path}[{i}]")
        seconds = m.get("tolerationSeconds")
        try:
            out.append(Toleration(str(m.get("key") or ""), str(m.get("operator") or "Equal"),
                                  str(m.get("value") or ""), str(m.get("effect") or ""),
                                  int(seconds) if seconds is not None else None))
        except ValueError as err:
            raise d.fail(f"{path}[{i}]", str(err)) from None
    return tuple(out)


def _pod(d: _Doc, meta: Mapping[str, Any], spec: Mapping[str, Any], path: str, *, name: str, namespace: str,
         owner: tuple[str, str], uid: str, created: datetime | None) -> Pod:
    affinity = d.map(d.map(spec.get("affinity"), f"{path}.affinity").get("nodeAffinity"), f"{path}.affinity.nodeAffinity")
    required = d.map(affinity.get("requiredDuringSchedulingIgnoredDuringExecution"),
                     f"{path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution")
    terms_path = f"{path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    terms = tuple(
        _requirements(d, d.map(t, f"{terms_path}[{i}]").get("matchExpressions"), f"{terms_path}[{i}].matchExpressions")
        for i, t in enumerate(d.list(required.get("nodeSelectorTerms"), terms_path))
    )
    return Pod(
        namespace=namespace,
        name=name,
        requests=_pod_requests(d, spec, path),
        uid=uid,
        owner_kind=owner[0],
        owner_name=owner[1],
        node_selector=frozen_map(d.str_map(spec.get("nodeSelector"), f"{path}.nodeSelector")),
        affinity_terms=terms,
        tolerations=_tolerations(d, spec.get("tolerations"), f"{path}.tolerations"),
        labels=frozen_map(d.str_map(meta.get("labels"), "metadata.labels")),
        priority=d.int(spec.get("priority"), f"{path}.priority", 0),
        created_at=created,
        node_name=str(spec.get("nodeName") or ""),
    )


def _meta(d: _Doc) -> tuple[Mapping[str, Any], str, str]:
    meta = d.map(d.doc.get("metadata"), "metadata")
    name = meta.get("name")
    if not name:
        raise d.fail("metadata.name", "missing")
    return meta, str(name), str(meta.get("namespace") or "default")


def pod_from_dict(doc: Mapping[str, Any], where: str = "pod") -> Pod:
    d = _Doc(_describe(where, doc), doc)
    meta, name, namespace = _meta(d)
    spec = d.map(doc.get("spec"), "spec")
    owners = [o for o in d.list(meta.get("ownerReferences"), "metadata.ownerReferences") if isinstance(o, Mapping)]
    controller = next((o for o in owners if o.get("controller")), owners[0] if owners else None)
    owner = (str(controller.get("kind", "")), str(controller.get("name", ""))) if controller else ("", "")
    return _pod(d, meta, spec, "spec", name=name, namespace=namespace, owner=owner, uid=str(meta.get("uid") or ""),
                created=_time(d, meta.get("creationTimestamp"), "metadata.creationTimestamp"))


def pods_from_workload(doc: Mapping[str, Any], where: str = "workload") -> list[Pod]:
    """The pods a Deployment, ReplicaSet or StatefulSet runs (``spec.replicas``, default 1)."""
    d = _Doc(_describe(where, doc), doc)
    kind = str(doc.get("kind"))
    meta, name, namespace = _meta(d)
    spec = d.map(doc.get("spec"), "spec")
    replicas = d.int(spec.get("replicas"), "spec.replicas", 1)
    if replicas < 0:
        raise d.fail("spec.replicas", f"negative ({replicas})")
    template = d.map(spec.get("template"), "spec.template")
    pod_meta = d.map(template.get("metadata"), "spec.template.metadata")
    pod_spec = d.map(template.get("spec"), "spec.template.spec")
    if not pod_spec.get("containers"):
        raise d.fail("spec.template.spec.containers", "missing")
    created = _time(d, meta.get("creationTimestamp"), "metadata.creationTimestamp")
    seed = json.dumps(template, sort_keys=True, default=str)
    if kind == "Deployment":
        rs = f"{name}-{_suffix(namespace + '/' + name + seed, 10)}"
        names = [f"{rs}-{_suffix(f'{rs}/{i}', 5)}" for i in range(replicas)]
        owner = ("ReplicaSet", rs)
    elif kind == "StatefulSet":
        names = [f"{name}-{i}" for i in range(replicas)]
        owner = ("StatefulSet", name)
    else:
        names = [f"{name}-{_suffix(f'{namespace}/{name}/{i}', 5)}" for i in range(replicas)]
        owner = ("ReplicaSet", name)
    pods = []
    for pod_name in names:
        pods.append(_pod(d, pod_meta, pod_spec, "spec.template.spec", name=pod_name, namespace=namespace, owner=owner,
                         uid=_suffix(f"uid/{namespace}/{pod_name}", 16), created=created))
    return pods


def daemonset_pod(doc: Mapping[str, Any], where: str = "daemonset") -> Pod:
    """The pod template of a DaemonSet, owned by it: one copy runs on every matching node."""
    d = _Doc(_describe(where, doc), doc)
    _, name, namespace = _meta(d)
    template = d.map(d.map(doc.get("spec"), "spec").get("template"), "spec.template")
    return _pod(d, d.map(template.get("metadata"), "spec.template.metadata"),
                d.map(template.get("spec"), "spec.template.spec"), "spec.template.spec",
                name=name, namespace=namespace, owner=(DAEMONSET, name), uid="", created=None)


def nodepool_from_dict(doc: Mapping[str, Any], where: str = "nodepool") -> NodePool:
    d = _Doc(_describe(where, doc), doc)
    _, name, _ = _meta(d)
    spec = d.map(doc.get("spec"), "spec")
    template = d.map(spec.get("template"), "spec.template")
    tspec = d.map(template.get("spec"), "spec.template.spec")
    limits = _resources(d, spec.get("limits"), "spec.limits")
    raw_limits = d.map(spec.get("limits"), "spec.limits")
    ref = d.map(tspec.get("nodeClassRef"), "spec.template.spec.nodeClassRef")
    disruption = d.map(spec.get("disruption"), "spec.disruption")
    budgets = tuple(
        Budget(str(b.get("nodes", "10%")), str(b.get("schedule") or ""), str(b.get("duration") or ""),
               tuple(str(r) for r in b.get("reasons") or ()))
        for b in d.list(disruption.get("budgets"), "spec.disruption.budgets") if isinstance(b, Mapping)
    ) or (Budget(),)
    weight = d.int(spec.get("weight"), "spec.weight", 0)
    if not 0 <= weight <= 100:
        raise d.fail("spec.weight", f"must be within 0-100, got {weight}")
    return NodePool(
        name=name,
        requirements=_requirements(d, tspec.get("requirements"), "spec.template.spec.requirements"),
        labels=frozen_map(d.str_map(d.map(template.get("metadata"), "spec.template.metadata").get("labels"),
                                    "spec.template.metadata.labels")),
        taints=_taints(d, tspec.get("taints"), "spec.template.spec.taints"),
        startup_taints=_taints(d, tspec.get("startupTaints"), "spec.template.spec.startupTaints"),
        limits=Limits(
            limits.cpu_m if "cpu" in raw_limits else None,
            limits.memory if "memory" in raw_limits else None,
            d.int(raw_limits.get("nodes"), "spec.limits.nodes", 0) if "nodes" in raw_limits else None,
        ),
        weight=weight,
        disruption=Disruption(str(disruption.get("consolidationPolicy") or "WhenEmptyOrUnderutilized"),
                              str(disruption.get("consolidateAfter") or "0s"), budgets),
        node_class_ref=NodeClassRef(str(ref.get("name") or "default"), str(ref.get("kind") or "AKSNodeClass"),
                                    str(ref.get("group") or "karpenter.azure.com")),
        expire_after=str(tspec.get("expireAfter") or "720h"),
    )


def nodeclass_from_dict(doc: Mapping[str, Any], where: str = "nodeclass") -> AKSNodeClass:
    d = _Doc(_describe(where, doc), doc)
    _, name, _ = _meta(d)
    spec = d.map(doc.get("spec"), "spec")
    kubelet = d.map(spec.get("kubelet"), "spec.kubelet")
    max_pods = spec.get("maxPods", kubelet.get("maxPods"))
    disk = d.int(spec.get("osDiskSizeGB"), "spec.osDiskSizeGB", 128)
    if not 30 <= disk <= 2048:
        raise d.fail("spec.osDiskSizeGB", f"must be within 30-2048, got {disk}")
    return AKSNodeClass(
        name=name,
        image_family=str(spec.get("imageFamily") or "Ubuntu2204"),
        os_disk_size_gb=disk,
        max_pods=d.int(max_pods, "spec.maxPods", 0) if max_pods is not None else None,
        vnet_subnet_id=str(spec.get("vnetSubnetID") or ""),
        tags=frozen_map(d.str_map(spec.get("tags"), "spec.tags")),
    )


def node_from_dict(doc: Mapping[str, Any], where: str = "node", requested: Resources = Resources()) -> Node:
    d = _Doc(_describe(where, doc), doc)
    meta, name, _ = _meta(d)
    spec = d.map(doc.get("spec"), "spec")
    status = d.map(doc.get("status"), "status")
    conditions = [c for c in d.list(status.get("conditions"), "status.conditions") if isinstance(c, Mapping)]
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions) if conditions else True
    return Node(
        name=name,
        allocatable=_resources(d, status.get("allocatable") or status.get("capacity"), "status.allocatable"),
        requested=requested,
        labels=frozen_map(d.str_map(meta.get("labels"), "metadata.labels")),
        taints=_taints(d, spec.get("taints"), "spec.taints"),
        ready=ready,
        unschedulable=bool(spec.get("unschedulable")),
    )


@dataclass(frozen=True, slots=True)
class Manifests:
    pods: tuple[Pod, ...] = ()
    daemonsets: tuple[Pod, ...] = ()
    nodepools: tuple[NodePool, ...] = ()
    node_classes: tuple[AKSNodeClass, ...] = ()
    nodes: tuple[Node, ...] = ()
    skipped: tuple[str, ...] = ()  # "<where> (<kind> <name>)" of documents of other kinds


_WORKLOADS = ("Deployment", "ReplicaSet", "StatefulSet")


def _flatten(where: str, doc: Any) -> Iterable[tuple[str, Mapping[str, Any]]]:
    if doc is None:
        return
    if not isinstance(doc, Mapping):
        raise InputError(f"{where}: expected a Kubernetes object (a mapping), got {type(doc).__name__}")
    if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
        for i, item in enumerate(doc["items"]):
            yield from _flatten(f"{where} item {i + 1}", item)
        return
    if "kind" not in doc:
        raise InputError(f"{where}: kind: missing")
    yield where, doc


def from_documents(documents: Iterable[tuple[str, Any]]) -> Manifests:
    """Model values from ``(where, document)`` pairs; ``where`` names the document in errors."""
    pods: list[Pod] = []
    daemonsets: list[Pod] = []
    pools: list[NodePool] = []
    classes: list[AKSNodeClass] = []
    node_docs: list[tuple[str, Mapping[str, Any]]] = []
    skipped: list[str] = []
    for where, raw in documents:
        for place, doc in _flatten(where, raw):
            kind = doc.get("kind")
            if kind == "Pod":
                pods.append(pod_from_dict(doc, place))
            elif kind in _WORKLOADS:
                pods.extend(pods_from_workload(doc, place))
            elif kind == "DaemonSet":
                daemonsets.append(daemonset_pod(doc, place))
            elif kind == "NodePool":
                pools.append(nodepool_from_dict(doc, place))
            elif kind == "AKSNodeClass":
                classes.append(nodeclass_from_dict(doc, place))
            elif kind == "Node":
                node_docs.append((place, doc))
            else:
                skipped.append(_describe(place, doc))
    used: dict[str, Resources] = {}
    for pod in pods:
        if pod.node_name:
            used[pod.node_name] = used.get(pod.node_name, Resources()) + pod.requests
    nodes = []
    for place, doc in node_docs:
        name = str((doc.get("metadata") or {}).get("name", ""))
        nodes.append(node_from_dict(doc, place, used.get(name, Resources())))
    return Manifests(tuple(pods), tuple(daemonsets), tuple(pools), tuple(classes), tuple(nodes), tuple(skipped))
