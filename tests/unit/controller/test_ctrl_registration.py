from __future__ import annotations

from typing import Any

from provisioner.controller.conditions import condition, initial_conditions, set_condition
from provisioner.controller.registration import NodeObservation, registration_step

LABELS = {"karpenter.sh/nodepool": "general-purpose", "node.kubernetes.io/instance-type": "Standard_D4ls_v5"}


def test_ctrl_conditions_transitions_and_ready(clock: Any) -> None:
    conds = initial_conditions(clock())
    conds, made = set_condition(conds, "Launched", "True", "Launched", "", clock())
    assert [t.type for t in made] == ["Launched"]
    assert made[0].event_message == (
        "Status condition transitioned, Type: Launched, Status: Unknown -> True, Reason: Launched")
    _again, none = set_condition(conds, "Launched", "True", "Launched", "", clock())
    assert none == []
    assert (condition(conds, "Ready") or {})["status"] == "Unknown"


def test_ctrl_conditions_failed_launch_says_why(clock: Any) -> None:
    conds, made = set_condition(initial_conditions(clock()), "Launched", "False", "SubscriptionQuotaReached",
                                "regional quota cores: limit 20, usage 14, required 16", clock())
    launched = condition(conds, "Launched") or {}
    assert launched["reason"] == "SubscriptionQuotaReached"
    assert "limit 20" in launched["message"]
    ready = condition(conds, "Ready") or {}
    assert ready["status"] == "False" and ready["reason"] == "SubscriptionQuotaReached"
    assert {t.type for t in made} == {"Launched", "Ready"}


def test_ctrl_registration_waits_for_launch_and_node(clock: Any) -> None:
    conds = initial_conditions(clock())
    step = registration_step(conds, NodeObservation("n", "azure://x", True), LABELS, (), clock())
    assert step.transitions == [] and step.patch is None
    conds, _ = set_condition(conds, "Launched", "True", "Launched", "", clock())
    assert registration_step(conds, None, LABELS, (), clock()).patch is None


def test_ctrl_registration_removes_unregistered_taint_and_syncs_labels(clock: Any) -> None:
    conds, _ = set_condition(initial_conditions(clock()), "Launched", "True", "Launched", "", clock())
    node = NodeObservation(
        "aks-general-purpose-abcde", "azure://x", ready=False, labels={"kubernetes.io/os": "linux"},
        taints=[{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}, {"key": "team", "value": "a",
                                                                                "effect": "NoSchedule"}],
    )
    step = registration_step(conds, node, LABELS, (), clock())
    assert step.registered_now and not step.initialized_now
    assert step.patch is not None
    assert step.patch.remove_taints == ["karpenter.sh/unregistered"]
    assert step.patch.labels == LABELS
    assert (condition(step.conditions, "Registered") or {})["status"] == "True"
    ready_node = NodeObservation(node.name, node.provider_id, ready=True, labels={**LABELS}, taints=[])
    step2 = registration_step(step.conditions, ready_node, LABELS, (), clock())
    assert step2.initialized_now and step2.patch is None
    assert (condition(step2.conditions, "Ready") or {})["status"] == "True"
    assert {t.type for t in step2.transitions} == {"Initialized", "Ready"}


def test_ctrl_registration_startup_taint_delays_initialized(clock: Any) -> None:
    conds, _ = set_condition(initial_conditions(clock()), "Launched", "True", "Launched", "", clock())
    node = NodeObservation("n", "azure://x", True, LABELS, [{"key": "example.com/boot", "effect": "NoSchedule"}])
    step = registration_step(conds, node, LABELS, ("example.com/boot",), clock())
    assert step.registered_now and not step.initialized_now
