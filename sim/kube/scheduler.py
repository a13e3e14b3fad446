"""The default scheduler's verdict, emulated: bind a pending pod or say why not.

For each pending pod (no ``spec.nodeName``, not being deleted, default scheduler), in
creation order, the filter step checks every node: Ready and schedulable, the pod
tolerates its NoSchedule/NoExecute taints, its nodeSelector and required node
affinity match (In, NotIn, Exists, DoesNotExist, Gt, Lt, and matchFields on
metadata.name), and its requests fit in allocatable minus what is already bound.
A pod that fits is bound to the feasible node with the most free CPU (ties by name).
One that does not gets ``PodScheduled=False``, reason ``Unschedulable``, and the
scheduler's message, e.g. ``0/3 nodes are available: 3 Insufficient cpu. preemption:
0/3 nodes are available: 3 No preemption victims found for incoming pod.``, plus a
``FailedScheduling`` Warning event from ``default-scheduler``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from provisioner.model.quantity import parse_cpu, parse_memory

__all__ = ["fits_reasons", "node_is_ready", "pod_requests", "tolerates", "unschedulable_message"]

Obj = dict[str, Any]
RESOURCE_NAMES = ("cpu", "memory", "pods", "ephemeral-storage")


def pod_requests(pod: Obj) -> dict[str, int]:
    """Effective requests: sum of containers, at least the largest init container."""
    spec = pod.get("spec") or {}
    total = {"cpu": 0, "memory": 0, "ephemeral-storage": 0}
    for container in spec.get("containers") or []:
        for name, value in ((container.get("resources") or {}).get("requests") or {}).items():
            if name == "cpu":
                total["cpu"] += parse_cpu(value)
            elif name in ("memory", "ephemeral-storage"):
                total[name] += parse_memory(value)
    for container in spec.get("initContainers") or []:
        for name, value in ((container.get("resources") or {}).get("requests") or {}).items():
            if name == "cpu":
                total["cpu"] = max(total["cpu"], parse_cpu(value))
            elif name in ("memory", "ephemeral-storage"):
                total[name] = max(total[name], parse_memory(value))
    for name, value in (spec.get("overhead") or {}).items():
        if name == "cpu":
            total["cpu"] += parse_cpu(value)
        elif name in ("memory", "ephemeral-storage"):
            total[name] += parse_memory(value)
    total["pods"] = 1
    return total


def node_allocatable(node: Obj) -> dict[str, int]:
    alloc = (node.get("status") or {}).get("allocatable") or {}
    return {
        "cpu": parse_cpu(alloc.get("cpu", 0)),
        "memory": parse_memory(alloc.get("memory", 0)),
        "pods": int(alloc.get("pods", 0)),
        "ephemeral-storage": parse_memory(alloc.get("ephemeral-storage", 0)),
    }


def node_is_ready(node: Obj) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def tolerates(tolerations: list[Obj], taint: Obj) -> bool:
    for tol in tolerations:
        if tol.get("effect") and tol["effect"] != taint.get("effect"):
            continue
        op = tol.get("operator") or "Equal"
        if not tol.get("key") and op == "Exists":
            return True
        if tol.get("key") != taint.get("key"):
            continue
        if op == "Exists" or tol.get("value", "") == taint.get("value", ""):
            return True
    return False


def _expression_matches(expr: Obj, labels: dict[str, str]) -> bool:
    key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
    present = key in labels
    value = labels.get(key, "")
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and values:
        try:
            have, want = int(value), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def _affinity_matches(pod: Obj, node: Obj) -> bool:
    spec = pod.get("spec") or {}
    labels = node["metadata"].get("labels") or {}
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        return True
    fields = {"metadata.name": node["metadata"]["name"]}
    for term in terms:
        exprs = term.get("matchExpressions") or []
        field_exprs = term.get("matchFields") or []
        if not exprs and not field_exprs:
            continue
        if all(_expression_matches(e, labels) for e in exprs) and all(_expression_matches(e, fields) for e in field_exprs):
            return True
    return False


def fits_reasons(pod: Obj, node: Obj, used: dict[str, int], need: dict[str, int] | None = None) -> list[str]:
    """Why ``pod`` cannot go on ``node`` (empty when it can), in the scheduler's words."""
    spec = pod.get("spec") or {}
    if (node.get("spec") or {}).get("unschedulable"):
        return ["node(s) were unschedulable"]
    taints = list((node.get("spec") or {}).get("taints") or [])
    if not node_is_ready(node) and not any(t.get("key", "").startswith("node.kubernetes.io/") for t in taints):
        taints.append({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"})
    tolerations = spec.get("tolerations") or []
    for taint in taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, taint):
            return [f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}"]
    if not _affinity_matches(pod, node):
        return ["node(s) didn't match Pod's node affinity/selector"]
    alloc = node_allocatable(node)
    need = need if need is not None else pod_requests(pod)
    reasons = []
    for name in RESOURCE_NAMES:
        if need[name] and used.get(name, 0) + need[name] > alloc[name]:
            reasons.append("Too many pods" if name == "pods" else f"Insufficient {name}")
    return reasons


def unschedulable_message(total: int, reasons: Counter[str], resource_only: int) -> str:
    """The scheduler's FitError text for ``total`` nodes."""
    if total == 0:
        return "no nodes available to schedule pods"
    parts = ", ".join(f"{count} {reason}" for reason, count in sorted(reasons.items()))
    preemption: list[str] = []
    if total - resource_only:
        preemption.append(f"{total - resource_only} Preemption is not helpful for scheduling")
    if resource_only:
        preemption.append(f"{resource_only} No preemption victims found for incoming pod")
    return f"0/{total} nodes are available: {parts}. preemption: 0/{total} nodes are available: {', '.join(preemption)}."
