"""Registration and initialisation: from "a VM exists" to "a Ready node Karpenter owns".

When a Node whose ``spec.providerID`` equals the claim's appears:

- the claim becomes ``Registered=True`` and records ``status.nodeName``;
- the Node gets the claim's labels (NodePool, capacity type, instance type, zone, SKU
  labels, the template's labels) and loses the ``karpenter.sh/unregistered:NoExecute`` taint;
- once the Node is Ready and no startup taint is left, the claim is ``Initialized=True``
  (and so ``Ready=True``).

``registration_step`` is pure: it takes what the informers show and returns the new
conditions, the transitions to report, and the patch the Node needs (if any).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from provisioner.controller.conditions import Condition, Transition, condition, set_condition

__all__ = ["UNREGISTERED_TAINT", "NodeObservation", "NodePatch", "RegistrationStep", "registration_step"]

UNREGISTERED_TAINT = "karpenter.sh/unregistered"


@dataclass(frozen=True, slots=True)
class NodeObservation:
    """What the controller knows about a Node from the informer cache."""

    name: str
    provider_id: str
    ready: bool
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: Sequence[Mapping[str, Any]] = ()  # {"key", "value", "effect"}


@dataclass(frozen=True, slots=True)
class NodePatch:
    node: str
    labels: dict[str, str]  # labels to set (merged into the Node's own)
    remove_taints: list[str]  # taint keys to remove


@dataclass(frozen=True, slots=True)
class RegistrationStep:
    conditions: list[Condition]
    transitions: list[Transition]
    patch: NodePatch | None
    registered_now: bool = False
    initialized_now: bool = False


def registration_step(
    conditions: list[Condition],
    node: NodeObservation | None,
    claim_labels: Mapping[str, str],
    startup_taints: Sequence[str],
    now: datetime,
) -> RegistrationStep:
    """Advance a launched claim given its Node (None while it has not appeared)."""
    launched = condition(conditions, "Launched") or {}
    if launched.get("status") != "True" or node is None:
        return RegistrationStep(conditions, [], None)
    transitions: list[Transition] = []
    out = conditions
    patch: NodePatch | None = None
    missing = {k: v for k, v in claim_labels.items() if node.labels.get(k) != v}
    taints = [dict(t) for t in node.taints if t.get("key") != UNREGISTERED_TAINT]
    if missing or len(taints) != len(node.taints):
        patch = NodePatch(node.name, missing, [UNREGISTERED_TAINT] if len(taints) != len(node.taints) else [])
    registered_now = False
    if (condition(out, "Registered") or {}).get("status") != "True":
        out, made = set_condition(out, "Registered", "True", "Registered", "", now)
        transitions += made
        registered_now = True
    initialized_now = False
    startup_left = [t for t in taints if t.get("key") in startup_taints]
    if node.ready and not startup_left and (condition(out, "Initialized") or {}).get("status") != "True":
        out, made = set_condition(out, "Initialized", "True", "Initialized", "", now)
        transitions += made
        initialized_now = True
    return RegistrationStep(out, transitions, patch, registered_now, initialized_now)
