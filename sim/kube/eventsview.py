"""events.k8s.io/v1 as a view of core/v1 Events, as the apiserver serves them.

Both APIs read and write the same objects; only field names differ
(``involvedObject``/``regarding``, ``message``/``note``, ``count``/``deprecatedCount``,
``source``/``deprecatedSource``, ``reportingComponent``/``reportingController`` …).
The emulator stores the core/v1 shape and converts at the API boundary.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FIELD_PATHS", "from_core", "to_core"]

Obj = dict[str, Any]

_PAIRS = (
    ("involvedObject", "regarding"),
    ("related", "related"),
    ("message", "note"),
    ("reason", "reason"),
    ("type", "type"),
    ("action", "action"),
    ("eventTime", "eventTime"),
    ("series", "series"),
    ("reportingComponent", "reportingController"),
    ("reportingInstance", "reportingInstance"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
)
FIELD_PATHS = {new: core for core, new in _PAIRS if core != new}


def from_core(event: Obj) -> Obj:
    out: Obj = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": event.get("metadata", {})}
    for core, new in _PAIRS:
        if event.get(core) is not None:
            out[new] = event[core]
    if not out.get("reportingController") and (event.get("source") or {}).get("component"):
        out["reportingController"] = event["source"]["component"]
    return out


def to_core(event: Obj) -> Obj:
    out: Obj = {"apiVersion": "v1", "kind": "Event", "metadata": event.get("metadata", {})}
    for core, new in _PAIRS:
        if event.get(new) is not None:
            out[core] = event[new]
    return out


def core_field_path(path: str) -> str:
    """A field selector path of events.k8s.io in core/v1 terms (``regarding.name`` -> ``involvedObject.name``)."""
    head, _, rest = path.partition(".")
    core = FIELD_PATHS.get(head, head)
    return f"{core}.{rest}" if rest else core
