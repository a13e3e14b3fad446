"""Status conditions of a NodeClaim, and the transitions worth an Event.

Conditions are kept as Kubernetes writes them: ``{"type", "status", "reason", "message",
"lastTransitionTime"}``. ``set_condition`` returns the new list and, when the status or
reason changed, a ``Transition`` that becomes the Event Karpenter emits ("Status condition
transitioned, Type: Launched, Status: Unknown -> True, Reason: Launched").

Karpenter's NodeClaim lifecycle: ``Launched`` → ``Registered`` → ``Initialized``; ``Ready``
is their conjunction. All start ``Unknown``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from provisioner.model.logvocab import format_time

__all__ = ["LIFECYCLE", "Transition", "condition", "initial_conditions", "set_condition"]

LIFECYCLE = ("Launched", "Registered", "Initialized", "Ready")

Condition = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Transition:
    type: str
    old_status: str
    status: str
    reason: str
    message: str

    @property
    def event_message(self) -> str:
        return (
            f"Status condition transitioned, Type: {self.type}, Status: {self.old_status} -> {self.status}, "
            f"Reason: {self.reason}" + (f", Message: {self.message}" if self.message else "")
        )


def initial_conditions(now: datetime) -> list[Condition]:
    stamp = format_time(now)
    return [
        {"type": t, "status": "Unknown", "reason": "AwaitingReconciliation", "message": "object is awaiting reconciliation",
         "lastTransitionTime": stamp}
        for t in LIFECYCLE
    ]


def condition(conditions: list[Condition], type_: str) -> Condition | None:
    for c in conditions:
        if c.get("type") == type_:
            return c
    return None


def set_condition(
    conditions: list[Condition], type_: str, status: str, reason: str, message: str, now: datetime
) -> tuple[list[Condition], list[Transition]]:
    """Set one condition; ``Ready`` follows the three others. Returns the list and the transitions made."""
    out = [dict(c) for c in conditions]
    transitions = [t for t in [_put(out, type_, status, reason, message, now)] if t is not None]
    if type_ != "Ready":
        states = [(condition(out, t) or {}).get("status", "Unknown") for t in LIFECYCLE[:-1]]
        if all(s == "True" for s in states):
            ready = _put(out, "Ready", "True", "Ready", "", now)
        elif "False" in states:
            failed = next(t for t, s in zip(LIFECYCLE[:-1], states, strict=True) if s == "False")
            ready = _put(out, "Ready", "False", f"{failed}False" if failed != "Launched" else reason, message, now)
        else:
            waiting = next(t for t, s in zip(LIFECYCLE[:-1], states, strict=True) if s != "True")
            ready = _put(out, "Ready", "Unknown", f"{waiting}Unknown" if waiting != "Launched" else reason,
                         message, now)
        if ready is not None:
            transitions.append(ready)
    return out, transitions


def _put(out: list[Condition], type_: str, status: str, reason: str, message: str, now: datetime) -> Transition | None:
    current = condition(out, type_)
    if current is None:
        current = {"type": type_, "status": "Unknown", "reason": "", "message": ""}
        out.append(current)
    old = str(current.get("status", "Unknown"))
    changed = old != status
    if old != status:
        current["lastTransitionTime"] = format_time(now)
    current.update(status=status, reason=reason, message=message)
    current.setdefault("lastTransitionTime", format_time(now))
    return Transition(type_, old, status, reason, message) if changed else None
