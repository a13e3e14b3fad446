"""Kubernetes objects as read from a cluster (plain dicts, as ``kubectl get -o json`` shows
them) turned into the TUI's pending pods and NodeClaims.

A pending pod gives its workload (owner reference, or its name), creation time, summed
container requests, the scheduler's ``PodScheduled`` message and the node it was
nominated to. A NodeClaim gives its NodePool, instance type, capacity type and zone
(from its labels), its node, its Launched / Registered / Initialized conditions with
reasons, and the message of a condition that is False as the last error.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from diagnose.sizing import vcpus_of
from provisioner.model.quantity import QuantityError, parse_cpu, parse_memory
from tui.state import CONDITIONS, ClaimState, Condition, PendingPod, workload_of

__all__ = ["claims_from", "pending_pods_from"]

Obj = dict[str, Any]


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _sum(containers: Iterable[Obj], key: str, parse: Any) -> int | None:
    total, seen = 0, False
    for container in containers:
        value = ((container.get("resources") or {}).get("requests") or {}).get(key)
        if value is None:
            continue
        try:
            total += parse(value)
            seen = True
        except QuantityError:
            continue
    return total if seen else None


def _workload(pod: Obj, key: str) -> str:
    namespace = pod["metadata"].get("namespace", "")
    for owner in pod["metadata"].get("ownerReferences") or []:
        kind, name = owner.get("kind", ""), owner.get("name", "")
        if kind == "ReplicaSet":
            derived = workload_of(f"{namespace}/{pod['metadata']['name']}")
            return derived if derived.startswith("Deployment ") else f"ReplicaSet {namespace}/{name}"
        if kind and name:
            return f"{kind} {namespace}/{name}"
    return workload_of(key)


def pending_pods_from(pods: Iterable[Obj]) -> dict[str, PendingPod]:
    out: dict[str, PendingPod] = {}
    for pod in pods:
        meta = pod.get("metadata") or {}
        status = pod.get("status") or {}
        if status.get("phase", "Pending") != "Pending" or status.get("nodeName") or (pod.get("spec") or {}).get("nodeName"):
            continue
        key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        containers = (pod.get("spec") or {}).get("containers") or []
        scheduled: Obj = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), {})
        reason = scheduled.get("message") or scheduled.get("reason") or ""
        out[key] = PendingPod(
            key=key,
            workload=_workload(pod, key),
            first_seen=_time(meta.get("creationTimestamp")),
            cpu_m=_sum(containers, "cpu", parse_cpu),
            memory=_sum(containers, "memory", parse_memory),
            scheduler_reason=reason if scheduled.get("status") == "False" else "",
            nodeclaim=status.get("nominatedNodeName", ""),
        )
    return out


def claims_from(nodeclaims: Iterable[Obj], region: str = "") -> dict[str, ClaimState]:
    out: dict[str, ClaimState] = {}
    for item in nodeclaims:
        meta = item.get("metadata") or {}
        labels = meta.get("labels") or {}
        status = item.get("status") or {}
        name = meta.get("name", "")
        instance_type = labels.get("node.kubernetes.io/instance-type", "")
        capacity_cpu = (status.get("capacity") or {}).get("cpu")
        vcpus = parse_cpu(capacity_cpu) // 1000 if capacity_cpu else (vcpus_of(instance_type, region) if instance_type else None)
        claim = ClaimState(
            name=name,
            nodepool=labels.get("karpenter.sh/nodepool", ""),
            instance_type=instance_type,
            vcpus=vcpus,
            capacity_type=labels.get("karpenter.sh/capacity-type", ""),
            zone=labels.get("topology.kubernetes.io/zone", ""),
            node=status.get("nodeName", ""),
            created=_time(meta.get("creationTimestamp")),
        )
        requests = ((item.get("spec") or {}).get("resources") or {}).get("requests") or {}
        if requests.get("cpu"):
            claim.requests_cpu_m = parse_cpu(requests["cpu"])
            claim.requests_memory = parse_memory(requests["memory"]) if requests.get("memory") else None
            claim.requests_pods = int(requests["pods"]) if str(requests.get("pods", "")).isdigit() else None
        for condition in status.get("conditions") or []:
            kind = condition.get("type")
            if kind not in CONDITIONS:
                continue
            claim.conditions[kind] = Condition(
                status=condition.get("status", "Unknown"),
                reason=condition.get("reason", ""),
                since=_time(condition.get("lastTransitionTime")),
            )
            if condition.get("status") == "False" and condition.get("message"):
                claim.last_error = condition["message"]
                claim.last_error_code = condition.get("reason", "")
                claim.category = claim.category or "launch-failed"
        out[name] = claim
    return out
