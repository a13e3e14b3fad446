"""The log-record vocabulary shared by karp-provisioner (which writes it) and karp-diagnose
(which reads it, and maps Karpenter's own messages onto the same event keys).

Every line the provisioner writes is one JSON object in Karpenter's v1 shape::

    {"level": "ERROR", "time": "2026-11-29T18:00:00.000Z", "logger": "controller",
     "message": "failed launching nodeclaim", "commit": "karp-0.1.0",
     "controller": "nodeclaim.lifecycle", "controllerGroup": "karpenter.sh",
     "controllerKind": "NodeClaim", "NodeClaim": {"name": "general-purpose-pq7gl"},
     "namespace": "", "name": "general-purpose-pq7gl", "reconcileID": "…",
     "event": "nodeclaim.launch_failed",
     "error": "(OperationNotAllowed) Operation could not be completed …",
     "error.code": "OperationNotAllowed",
     "quota": {"scope": "regional", "name": "cores", "region": "westus2",
               "limit": 20, "usage": 14, "required": 16, "newLimit": 30}}

``event`` is the stable key; ``message`` keeps Karpenter's wording where the meaning is
the same, so existing habits and tools carry over. A line is only ever built through
``record()`` from an ``EventKind`` below: never as free text.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = ["EVENTS", "EventKind", "format_time", "record"]


@dataclass(frozen=True, slots=True)
class EventKind:
    key: str  # stable event key, e.g. "nodeclaim.launch_failed"
    message: str  # Karpenter's message where the meaning is the same
    level: str  # INFO | DEBUG | WARN | ERROR
    controller: str  # Karpenter's controller name
    kind: str = ""  # controllerKind: NodeClaim, NodePool, Pod, Node or ""


def _kinds(*kinds: EventKind) -> dict[str, EventKind]:
    return {k.key: k for k in kinds}


EVENTS: dict[str, EventKind] = _kinds(
    # provisioning
    EventKind("pods.found", "found provisionable pod(s)", "INFO", "provisioner"),
    EventKind("plan.computed", "computed new nodeclaim(s) to fit pod(s)", "INFO", "provisioner"),
    EventKind("plan.unready_fit", "computed unready node(s) will fit pod(s)", "INFO", "provisioner"),
    EventKind("pod.unschedulable", "could not schedule pod", "ERROR", "provisioner", "Pod"),
    EventKind("quota.blocked", "quota blocks pod(s)", "WARN", "provisioner", "NodePool"),
    EventKind("nodepool.limit_reached", "nodepool limit reached", "WARN", "provisioner", "NodePool"),
    EventKind("nodepool.no_compatible", "no compatible instance types", "WARN", "provisioner", "NodePool"),
    EventKind("nodeclaim.created", "created nodeclaim", "INFO", "provisioner", "NodeClaim"),
    # launch
    EventKind("nodeclaim.instance_selected", "selected instance type", "INFO", "nodeclaim.lifecycle", "NodeClaim"),
    EventKind("nodeclaim.image_resolved", "resolved image", "INFO", "nodeclaim.lifecycle", "NodeClaim"),
    EventKind("nic.creating", "creating network interface", "DEBUG", "nodeclaim.lifecycle", "NodeClaim"),
    EventKind("nic.created", "created network interface", "DEBUG", "nodeclaim.lifecycle", "NodeClaim"),
    EventKind("nic.deleted", "deleted network interface", "INFO", "nodeclaim.lifecycle", "NodeClaim"),
    EventKind("vm.creating", "creating virtual machine", "DEBUG", "nodeclaim.lifecycle", "NodeClaim"),
    EventKind("vm.adopted", "adopted existing virtual machine", "INFO", "nodeclaim.lifecycle", "NodeClaim"),
    EventKind("nodeclaim.launched", "launched nodeclaim", "INFO", "nodeclaim.lifecycle", "NodeClaim"),
    EventKind("nodeclaim.launch_failed", "failed launching nodeclaim", "ERROR", "nodeclaim.lifecycle", "NodeClaim"),
    EventKind("nodeclaim.registered", "registered nodeclaim", "INFO", "nodeclaim.lifecycle", "NodeClaim"),
    EventKind("nodeclaim.initialized", "initialized nodeclaim", "INFO", "nodeclaim.lifecycle", "NodeClaim"),
    EventKind("nodeclaim.launch_timeout", "launch timed out", "ERROR", "nodeclaim.lifecycle", "NodeClaim"),
    EventKind("nodeclaim.registration_timeout", "registration timed out", "ERROR", "nodeclaim.lifecycle", "NodeClaim"),
    EventKind("nodeclaim.deleted", "deleted nodeclaim", "INFO", "nodeclaim.termination", "NodeClaim"),
    EventKind("node.deleted", "deleted node", "INFO", "node.termination", "Node"),
    # cloud state
    EventKind("quota.updated", "updated quota usages", "DEBUG", "quota"),
    EventKind("offering.unavailable", "removing offering from offerings", "INFO", "nodeclaim.lifecycle", "NodeClaim"),
    EventKind("cloud.throttled", "throttled by azure", "WARN", "azure"),
    EventKind("gc.vm_deleted", "garbage collected virtual machine", "INFO", "garbagecollection"),
    EventKind("gc.nic_deleted", "garbage collected network interface", "INFO", "garbagecollection"),
    EventKind("gc.nodeclaim_deleted", "garbage collected nodeclaim", "INFO", "garbagecollection", "NodeClaim"),
    # disruption
    EventKind("disruption.started", "disrupting node(s)", "INFO", "disruption"),
    # process
    EventKind("leader.acquired", "acquired lease", "INFO", "leaderelection"),
    EventKind("leader.lost", "lost lease", "ERROR", "leaderelection"),
    EventKind("process.starting", "starting karp-provisioner", "INFO", "manager"),
    EventKind("process.stopping", "stopping karp-provisioner", "INFO", "manager"),
    EventKind("controller.error", "Reconciler error", "ERROR", "manager"),
    EventKind("event.not_recorded", "could not record event", "WARN", "events"),
)


def format_time(moment: datetime) -> str:
    """Karpenter's timestamp form: UTC, milliseconds, a trailing Z."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


_KIND_GROUP = {"NodeClaim": "karpenter.sh", "NodePool": "karpenter.sh", "Pod": "", "Node": ""}


def record(
    event: str,
    now: datetime,
    *,
    commit: str = "karp",
    name: str = "",
    namespace: str = "",
    reconcile_id: str = "",
    message: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """Build one log record for ``event``; ``fields`` follow Karpenter's spellings
    (``NodeClaim``, ``NodePool``, ``Pods``, ``error``, ``requests`` …) plus ours (``error.code``, ``quota``).
    ``message`` may extend the vocabulary's text (e.g. "selected instance type" stays the prefix)."""
    kind = EVENTS[event]
    out: dict[str, Any] = {
        "level": kind.level,
        "time": format_time(now),
        "logger": "controller",
        "message": message if message is not None else kind.message,
        "commit": commit,
        "controller": kind.controller,
    }
    if kind.kind:
        out["controllerGroup"] = _KIND_GROUP.get(kind.kind, "")
        out["controllerKind"] = kind.kind
        if name:
            out[kind.kind] = {"name": name, **({"namespace": namespace} if namespace else {})}
        out["namespace"] = namespace
        out["name"] = name
        if reconcile_id:
            out["reconcileID"] = reconcile_id
    out["event"] = kind.key
    out.update(fields)
    return out
