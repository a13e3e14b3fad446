"""Liveness and restart recovery decisions: pure functions of the claims, their VMs and now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from provisioner.controller.cluster import ClaimRecord
from provisioner.controller.fleet import ClaimInfo
from provisioner.controller.liveness import (
    LAUNCH_TIMEOUT,
    REGISTRATION_TIMEOUT,
    LivenessConfig,
    expired_claims,
)
from provisioner.controller.recovery import ADOPT, CLEAN, RESUME, WAIT, decide, needs_lookup
from provisioner.model.logvocab import format_time
from provisioner.model.ports import VmInfo
from provisioner.model.resources import Resources

T0 = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)


def claim(name: str, launched: str = "Unknown", registered: str = "Unknown", *, created: datetime = T0,
          launched_at: datetime | None = None, deleting: bool = False, node: str = "") -> ClaimInfo:
    conditions = (
        {"type": "Launched", "status": launched, "lastTransitionTime": format_time(launched_at or created)},
        {"type": "Registered", "status": registered, "lastTransitionTime": format_time(created)},
    )
    record = ClaimRecord(name, "general-purpose", "Standard_D4s_v5", "on-demand", "1", Resources(cpu_m=1000),
                         provider_id=f"azure:///x/virtualMachines/aks-{name}" if launched == "True" else "",
                         node_name=node, conditions=conditions, deleting=deleting, launched_at=launched_at)
    return ClaimInfo(record, created)


def vm(name: str, state: str) -> VmInfo:
    return VmInfo(f"/sub/vms/aks-{name}", f"aks-{name}", "Standard_D4s_v5", "1", False, state,
                  {"karpenter.azure.com_cluster": "karpenter"})


def test_launch_timeout_after_five_minutes_by_default() -> None:
    claims = [claim("a")]
    assert expired_claims(claims, T0 + timedelta(minutes=4, seconds=59), LivenessConfig()) == []
    [expired] = expired_claims(claims, T0 + timedelta(minutes=5), LivenessConfig())
    assert expired.reason == LAUNCH_TIMEOUT and expired.claim == "a" and expired.nodepool == "general-purpose"
    assert expired.event == "nodeclaim.launch_timeout" and "did not complete launch within 5m00s" in expired.message


def test_registration_timeout_counts_from_the_launch() -> None:
    launched_at = T0 + timedelta(minutes=4)
    claims = [claim("b", "True", launched_at=launched_at, node="aks-b")]
    assert expired_claims(claims, launched_at + timedelta(minutes=14), LivenessConfig()) == []
    [expired] = expired_claims(claims, launched_at + timedelta(minutes=15), LivenessConfig())
    assert expired.reason == REGISTRATION_TIMEOUT and expired.event == "nodeclaim.registration_timeout"
    assert expired.node == "aks-b"


def test_timeouts_are_configurable_and_skip_healthy_failed_and_deleting_claims() -> None:
    config = LivenessConfig(timedelta(seconds=10), timedelta(seconds=20))
    claims = [claim("ok", "True", "True"), claim("failed", "False"), claim("gone", deleting=True), claim("slow")]
    assert [e.claim for e in expired_claims(claims, T0 + timedelta(seconds=10), config)] == ["slow"]


def test_recovery_resumes_adopts_cleans_and_waits() -> None:
    now = T0 + timedelta(seconds=60)
    claims = [claim("mine"), claim("launched", "True"), claim("failed", "False"), claim("vm-ok"),
              claim("vm-creating"), claim("vm-failed"), claim("no-vm-old"),
              claim("no-vm-young", created=now - timedelta(seconds=5)), claim("unread"), claim("bye", deleting=True)]
    tracked = ["mine"]
    assert needs_lookup(claims, tracked) == ["vm-ok", "vm-creating", "vm-failed", "no-vm-old", "no-vm-young", "unread"]
    vms = {"vm-ok": vm("vm-ok", "Succeeded"), "vm-creating": vm("vm-creating", "Creating"),
           "vm-failed": vm("vm-failed", "Failed"), "no-vm-old": None, "no-vm-young": None}
    actions = {d.claim.name: d.action for d in decide(claims, tracked, vms, now, timedelta(seconds=30))}
    assert actions == {"launched": RESUME, "failed": CLEAN, "vm-ok": ADOPT, "vm-creating": WAIT, "vm-failed": CLEAN,
                       "no-vm-old": CLEAN, "no-vm-young": WAIT, "unread": WAIT}


def test_recovery_never_plans_a_create() -> None:
    """Whatever it finds, recovery adopts the VM that exists or deletes; there is no 'create' action."""
    now = T0 + timedelta(hours=1)
    states = ["Succeeded", "Creating", "Failed", "Deleting", "Updating", ""]
    claims = [claim(f"c{i}") for i in range(len(states) + 1)]
    vms: dict[str, VmInfo | None] = {f"c{i}": vm(f"c{i}", s) for i, s in enumerate(states)}
    vms[f"c{len(states)}"] = None
    decisions = decide(claims, [], vms, now, timedelta(seconds=30))
    assert {d.action for d in decisions} <= {ADOPT, CLEAN, WAIT, RESUME}
    adopted = [d for d in decisions if d.action == ADOPT]
    assert all(d.vm is not None and d.vm.name == f"aks-{d.claim.name}" for d in adopted)
