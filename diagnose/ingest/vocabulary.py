"""What karp-diagnose knows about the keys and messages of Karpenter's log shapes.

``DECODE_SCHEMA`` is the superset of every key any shape uses (alpha, v1, the knative
fallback, AWS-provider lines, this project's own records): every JSON line is decoded
against it in one pass, so a key first seen late in a file is never dropped. Keys of a
different type than declared come back as JSON text (arrays, objects) or null.

``event_expr`` maps a message onto the stable event keys of
``provisioner.model.logvocab.EVENTS``, whatever generation of Karpenter wrote it. It is
a polars expression (two regex passes over the column), applied to every line.
"""

from __future__ import annotations

import polars as pl

from provisioner.model.logvocab import EVENTS

__all__ = ["DECODE_SCHEMA", "EVENT_PREFIXES", "EVENT_SUBSTRINGS", "event_expr"]

# cluster-scoped objects are read by name only (each field decoded costs time on every line)
_NAME = pl.Struct({"name": pl.Utf8})
_NAMESPACED = pl.Struct({"name": pl.Utf8, "namespace": pl.Utf8})

DECODE_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "level": pl.Utf8,
    "time": pl.Utf8,
    "ts": pl.Float64,
    "logger": pl.Utf8,
    "message": pl.Utf8,
    "msg": pl.Utf8,
    "controller": pl.Utf8,
    "controllerKind": pl.Utf8,
    "name": pl.Utf8,
    "event": pl.Utf8,
    "NodeClaim": _NAME,
    "NodePool": _NAME,
    "Node": _NAME,
    "Pod": _NAMESPACED,
    "Machine": _NAME,
    "nodeclaim": pl.Utf8,
    "nodepool": pl.Utf8,
    "machine": pl.Utf8,
    "provisioner": pl.Utf8,
    "node": pl.Utf8,
    "pod": pl.Utf8,
    "pods": pl.Utf8,
    "Pods": pl.Utf8,
    "instance-type": pl.Utf8,
    "instance-types": pl.Utf8,
    "instanceType": pl.Utf8,
    "zone": pl.Utf8,
    "capacity-type": pl.Utf8,
    "capacityType": pl.Utf8,
    "requests": pl.Struct({"cpu": pl.Utf8, "memory": pl.Utf8, "pods": pl.Utf8}),
    "error": pl.Utf8,
    "error.code": pl.Utf8,
    "quota": pl.Struct(
        {
            "scope": pl.Utf8,
            "name": pl.Utf8,
            "region": pl.Utf8,
            "limit": pl.Int64,
            "usage": pl.Int64,
            "required": pl.Int64,
            "newLimit": pl.Int64,
        }
    ),
    "region": pl.Utf8,
    "location": pl.Utf8,
}

# Message beginnings, per event key, across generations (alpha capitalised the Azure
# launch messages; v1 lower-cased them; "machine" preceded "nodeclaim" before v0.32).
EVENT_PREFIXES: dict[str, tuple[str, ...]] = {
    "pods.found": ("found provisionable pod",),
    "plan.computed": ("computed new nodeclaim", "computed new machine"),
    "plan.unready_fit": ("computed unready node",),
    "pod.unschedulable": ("could not schedule pod", "Could not schedule pod", "incompatible with nodepool",
                          "incompatible with provisioner"),
    "quota.blocked": ("quota blocks pod",),
    "nodepool.limit_reached": ("nodepool limit reached", "all available instance types exceed limits"),
    "nodepool.no_compatible": ("no compatible instance types",),
    "nodeclaim.created": ("created nodeclaim", "created machine"),
    "nodeclaim.launch_failed": ("failed launching nodeclaim", "failed launching machine"),
    "nodeclaim.instance_selected": ("Selected instance type", "selected instance type"),
    "nodeclaim.image_resolved": ("Resolved image", "resolved image"),
    "nic.creating": ("Creating network interface", "creating network interface"),
    "nic.created": ("Successfully created network interface", "created network interface"),
    "nic.deleted": ("Deleted network interface", "deleted network interface"),
    "vm.creating": ("Creating virtual machine", "creating virtual machine"),
    "vm.adopted": ("adopted existing virtual machine",),
    "nodeclaim.launched": ("launched nodeclaim", "launched machine", "launched new instance"),
    "nodeclaim.registered": ("registered nodeclaim", "registered machine"),
    "nodeclaim.initialized": ("initialized nodeclaim", "initialized machine"),
    "nodeclaim.deleted": ("deleted nodeclaim", "deleted machine"),
    "node.deleted": ("deleted node",),
    "quota.updated": ("updated quota usages",),
    "offering.unavailable": ("removing offering from offerings", "marking VM Family unavailable"),
    "cloud.throttled": ("throttled by azure",),
    "gc.vm_deleted": ("garbage collected virtual machine",),
    "gc.nic_deleted": ("garbage collected network interface",),
    "gc.nodeclaim_deleted": ("garbage collected nodeclaim",),
    "disruption.started": ("disrupting node", "disrupting via", "disrupting nodeclaim"),
    "leader.acquired": ("successfully acquired lease", "acquired lease"),
    "leader.lost": ("lost lease", "leaderelection lost"),
    "process.starting": ("starting karp-provisioner",),
    "process.stopping": ("stopping karp-provisioner",),
}

# Phrases that mark an event wherever they appear in the message.
EVENT_SUBSTRINGS: dict[str, tuple[str, ...]] = {
    "nodeclaim.registration_timeout": ("registration timeout", "registration timed out"),
    "nodeclaim.launch_timeout": ("launch timeout", "launch timed out"),
}

assert set(EVENT_PREFIXES) <= set(EVENTS) and set(EVENT_SUBSTRINGS) <= set(EVENTS)


def _escape(text: str) -> str:
    return "".join("\\" + c if c in r"\.^$|?*+()[]{}" else c for c in text)


def _alternation(table: dict[str, tuple[str, ...]]) -> tuple[str, dict[str, str]]:
    # longest first, so "deleted nodeclaim" wins over "deleted node"
    phrases = sorted(((p, k) for k, ps in table.items() for p in ps), key=lambda pk: -len(pk[0]))
    return "(" + "|".join(_escape(p) for p, _ in phrases) + ")", {p: k for p, k in phrases}


_PREFIX_RE, _PREFIX_KEY = _alternation(EVENT_PREFIXES)
_SUBSTR_RE, _SUBSTR_KEY = _alternation(EVENT_SUBSTRINGS)


def event_expr(message: pl.Expr) -> pl.Expr:
    """The event key a message stands for, or null."""
    by_prefix = message.str.extract("^" + _PREFIX_RE, 1).replace_strict(_PREFIX_KEY, default=None, return_dtype=pl.Utf8)
    by_phrase = message.str.extract(_SUBSTR_RE, 1).replace_strict(_SUBSTR_KEY, default=None, return_dtype=pl.Utf8)
    # alpha: 'Creating virtual machine "x" failed: …' is the launch failure itself
    failed_vm = (by_prefix == "vm.creating") & message.str.contains(" failed", literal=True)
    return (
        pl.when(failed_vm)
        .then(pl.lit("nodeclaim.launch_failed"))
        .otherwise(pl.coalesce(by_prefix, by_phrase))
    )
