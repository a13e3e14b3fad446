"""Server-side printing: the ``Table`` answer ``kubectl get`` asks for.

kubectl requests ``application/json;as=Table;g=meta.k8s.io;v=v1``; the apiserver
answers with column definitions and one row of cells per object. Built-in kinds get
kubectl's familiar columns; custom resources get the CRD's
``additionalPrinterColumns`` (evaluated with the small JSONPath subset CRDs use).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from sim.kube.kinds import Kind

__all__ = ["age", "as_table", "json_path", "wants_table"]

Obj = dict[str, Any]


def wants_table(accept: str) -> bool:
    return "as=Table" in accept


def age(timestamp: str | None, now: datetime | None = None) -> str:
    if not timestamp:
        return "<unknown>"
    then = datetime.strptime(timestamp[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    seconds = max(0, int(((now or datetime.now(UTC)) - then).total_seconds()))
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 48:
        return f"{hours}h{minutes % 60}m" if hours < 8 else f"{hours}h"
    return f"{hours // 24}d{hours % 24}h" if hours < 24 * 8 else f"{hours // 24}d"


_FILTER = re.compile(r"^\[\?\(@\.([\w.-]+)\s*==\s*[\"']([^\"']*)[\"']\)\]")


def json_path(obj: Any, path: str) -> Any:
    """Evaluate ``.a.b``, ``.a.b\\.c``, ``.a[0]`` and ``.a[?(@.k=="v")].b`` paths."""
    text = path.strip().removeprefix("{").removesuffix("}").strip()
    node: Any = obj
    while text and node is not None:
        if text.startswith("."):
            m = re.match(r"^\.((?:\\.|[^.\[\\])+)", text)
            if not m:
                return None
            key = m.group(1).replace("\\.", ".")
            node = node.get(key) if isinstance(node, dict) else None
            text = text[m.end():]
        elif m := _FILTER.match(text):
            field, value = m.group(1), m.group(2)
            node = next((i for i in node if isinstance(i, dict) and str(json_path(i, "." + field)) == value), None) if isinstance(node, list) else None
            text = text[m.end():]
        elif m := re.match(r"^\[(\d+)\]", text):
            index = int(m.group(1))
            node = node[index] if isinstance(node, list) and index < len(node) else None
            text = text[m.end():]
        else:
            return None
    return node


def _pod_cells(pod: Obj) -> list[Any]:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    containers = (pod.get("spec") or {}).get("containers") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(int(s.get("restartCount", 0)) for s in statuses)
    status = (pod.get("status") or {}).get("phase", "Pending")
    if pod["metadata"].get("deletionTimestamp"):
        status = "Terminating"
    node = (pod.get("spec") or {}).get("nodeName") or "<none>"
    ip = (pod.get("status") or {}).get("podIP") or "<none>"
    return [pod["metadata"]["name"], f"{ready}/{len(containers)}", status, restarts, age(pod["metadata"].get("creationTimestamp")), ip, node]


def _node_cells(node: Obj) -> list[Any]:
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = next((c.get("status") for c in conditions if c.get("type") == "Ready"), "Unknown")
    status = "Ready" if ready == "True" else "NotReady"
    if (node.get("spec") or {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    labels = node["metadata"].get("labels") or {}
    roles = ",".join(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/")) or "<none>"
    version = ((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")
    return [node["metadata"]["name"], status, roles, age(node["metadata"].get("creationTimestamp")), version]


def _event_cells(event: Obj) -> list[Any]:
    inv = event.get("involvedObject") or event.get("regarding") or {}
    last = event.get("lastTimestamp") or event.get("eventTime") or event["metadata"].get("creationTimestamp")
    obj = f"{str(inv.get('kind', '')).lower()}/{inv.get('name', '')}"
    return [age(last), event.get("type", ""), event.get("reason", ""), obj, event.get("message") or event.get("note") or ""]


def _deployment_cells(obj: Obj) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [obj["metadata"]["name"], f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}", status.get("updatedReplicas", 0),
            status.get("availableReplicas", 0), age(obj["metadata"].get("creationTimestamp"))]


def _replicaset_cells(obj: Obj) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [obj["metadata"]["name"], spec.get("replicas", 1), status.get("replicas", 0), status.get("readyReplicas", 0),
            age(obj["metadata"].get("creationTimestamp"))]


def _namespace_cells(obj: Obj) -> list[Any]:
    return [obj["metadata"]["name"], (obj.get("status") or {}).get("phase", "Active"), age(obj["metadata"].get("creationTimestamp"))]


def _lease_cells(obj: Obj) -> list[Any]:
    return [obj["metadata"]["name"], (obj.get("spec") or {}).get("holderIdentity") or "", age(obj["metadata"].get("creationTimestamp"))]


_BUILTIN_COLUMNS: dict[str, tuple[list[tuple[str, str, int]], Any]] = {
    "/pods": ([("Name", "string", 0), ("Ready", "string", 0), ("Status", "string", 0), ("Restarts", "integer", 0),
               ("Age", "string", 0), ("IP", "string", 1), ("Node", "string", 1)], _pod_cells),
    "/events": ([("Last Seen", "string", 0), ("Type", "string", 0), ("Reason", "string", 0), ("Object", "string", 0),
                 ("Message", "string", 0)], _event_cells),
    "apps/deployments": ([("Name", "string", 0), ("Ready", "string", 0), ("Up-to-date", "integer", 0), ("Available", "integer", 0),
                          ("Age", "string", 0)], _deployment_cells),
    "apps/replicasets": ([("Name", "string", 0), ("Desired", "integer", 0), ("Current", "integer", 0), ("Ready", "integer", 0),
                          ("Age", "string", 0)], _replicaset_cells),
    "/namespaces": ([("Name", "string", 0), ("Status", "string", 0), ("Age", "string", 0)], _namespace_cells),
    "coordination.k8s.io/leases": ([("Name", "string", 0), ("Holder", "string", 0), ("Age", "string", 0)], _lease_cells),
    "/nodes": ([("Name", "string", 0), ("Status", "string", 0), ("Roles", "string", 0), ("Age", "string", 0),
                ("Version", "string", 0)], _node_cells),
}


def as_table(kind: Kind, answer: Obj) -> Obj:
    items = answer.get("items") if answer.get("kind", "").endswith("List") else [answer]
    items = items or []
    if kind.key in _BUILTIN_COLUMNS:
        specs, cells_of = _BUILTIN_COLUMNS[kind.key]
        columns = [{"name": n, "type": t, "format": "name" if n == "Name" else "", "description": "", "priority": p} for n, t, p in specs]
        rows = [cells_of(obj) for obj in items]
    else:
        columns = [{"name": "Name", "type": "string", "format": "name", "description": "", "priority": 0}]
        extra = [c for c in kind.columns]
        columns += [{"name": c["name"], "type": c.get("type", "string"), "format": "", "description": c.get("description", ""),
                     "priority": int(c.get("priority", 0))} for c in extra]
        if not any(c.get("name") == "Age" for c in extra):
            columns.append({"name": "Age", "type": "string", "format": "", "description": "", "priority": 0})
        rows = []
        for obj in items:
            cells: list[Any] = [obj["metadata"]["name"]]
            for c in extra:
                value = json_path(obj, c["jsonPath"])
                if c.get("type") == "date":
                    value = age(value) if value else "<unknown>"
                cells.append("<none>" if value is None else value)
            if not any(c.get("name") == "Age" for c in extra):
                cells.append(age(obj["metadata"].get("creationTimestamp")))
            rows.append(cells)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": (answer.get("metadata") or {}).get("resourceVersion", "")},
        "columnDefinitions": columns,
        "rows": [
            {"cells": cells, "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]}}
            for cells, obj in zip(rows, items, strict=True)
        ],
    }
