"""Garbage collection decisions: only resources whose cluster tag is ours are ever collected."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from provisioner.controller.cluster import ClaimRecord
from provisioner.controller.fleet import ClaimInfo
from provisioner.controller.garbage import collect, owned, vm_name_of
from provisioner.model.ports import NicInfo, VmInfo
from provisioner.model.resources import Resources

T0 = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)
GRACE = timedelta(minutes=5)
OURS = {"karpenter.azure.com_cluster": "karpenter"}


def vm(name: str, tags: dict[str, str], created: datetime | None = T0, state: str = "Succeeded") -> VmInfo:
    return VmInfo(f"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/{name}", name,
                  "Standard_D4s_v5", "1", False, state, tags, created)


def nic(name: str, tags: dict[str, str], vm_name: str = "") -> NicInfo:
    vm_id = f"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/{vm_name}" if vm_name else ""
    return NicInfo(f"/nics/{name}", name, "10.0.0.4", tags, vm_id)


def claim(name: str, launched: bool = True, deleting: bool = False) -> ClaimInfo:
    conditions = ({"type": "Launched", "status": "True" if launched else "Unknown"},)
    pid = f"azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-{name}"
    record = ClaimRecord(name, "general-purpose", "Standard_D4s_v5", "on-demand", "1", Resources(),
                         provider_id=pid if launched else "", node_name=f"aks-{name}" if launched else "",
                         conditions=conditions, deleting=deleting)
    return ClaimInfo(record, T0)


def test_ownership_needs_our_exact_cluster_tag() -> None:
    assert owned(OURS, "karpenter")
    assert not owned({}, "karpenter")
    assert not owned({"karpenter.azure.com_cluster": "other"}, "karpenter")
    assert not owned({"karpenter.azure.com_cluster": ""}, "")
    assert not owned({"karpenter.azure.com_cluster": "Karpenter"}, "karpenter")
    assert vm_name_of("azure:///subscriptions/s/x/virtualMachines/aks-a") == "aks-a"


def test_only_tagged_vms_without_a_claim_past_the_grace_are_collected() -> None:
    vms = [
        vm("aks-orphan", {**OURS, "karpenter.azure.com_nodeclaim": "orphan"}),
        vm("aks-live", {**OURS, "karpenter.azure.com_nodeclaim": "live"}),
        vm("aks-untagged", {}),
        vm("aks-other", {"karpenter.azure.com_cluster": "someone-else", "karpenter.azure.com_nodeclaim": "x"}),
        vm("hand-made", {"env": "prod"}),
        vm("aks-young", OURS, created=T0 + timedelta(minutes=4)),
        vm("aks-deleting", OURS, state="Deleting"),
    ]
    plan = collect(vms, [], [claim("live")], [], "karpenter", T0 + timedelta(minutes=5), GRACE, {})
    assert plan.vms == ("aks-orphan",)
    # with no grace at all, still nothing untagged, foreign, live or already deleting
    plan = collect(vms, [], [claim("live")], [], "karpenter", T0 + timedelta(days=30), timedelta(0), {})
    assert set(plan.vms) == {"aks-orphan", "aks-young"}


def test_a_vm_without_creation_time_ages_from_when_it_was_first_seen() -> None:
    vms = [vm("aks-x", OURS, created=None)]
    now = T0 + timedelta(hours=1)
    assert collect(vms, [], [], [], "karpenter", now, GRACE, {}).vms == ()
    assert collect(vms, [], [], [], "karpenter", now, GRACE, {"vm:aks-x": now - GRACE}).vms == ("aks-x",)


def test_claims_just_written_by_this_process_protect_their_vm() -> None:
    vms = [vm("aks-new", {**OURS, "karpenter.azure.com_nodeclaim": "new"})]
    plan = collect(vms, [], [], ["new"], "karpenter", T0 + timedelta(hours=1), GRACE, {})
    assert plan.vms == ()


def test_nics_free_and_unclaimed_are_collected_attached_or_foreign_ones_never() -> None:
    nics = [
        nic("aks-free", {**OURS, "karpenter.azure.com_nodeclaim": "free"}),
        nic("aks-attached", OURS, vm_name="aks-attached"),
        nic("aks-claimed", {**OURS, "karpenter.azure.com_nodeclaim": "claimed"}),
        nic("aks-foreign", {"karpenter.azure.com_cluster": "other"}),
        nic("aks-untagged", {}),
    ]
    vms = [vm("aks-attached", OURS)]
    first = {f"nic:{n.name}": T0 for n in nics}
    plan = collect(vms, nics, [claim("claimed", launched=False)], [], "karpenter", T0 + GRACE, GRACE, first)
    assert plan.nics == ("aks-free",)
    assert collect([], nics[:1], [], [], "karpenter", T0 + GRACE, GRACE, {}).nics == ()  # first seen now


def test_a_launched_claim_whose_vm_is_gone_is_collected() -> None:
    claims = [claim("gone"), claim("here"), claim("launching", launched=False), claim("leaving", deleting=True)]
    vms = [vm("aks-here", OURS)]
    plan = collect(vms, [], claims, [], "karpenter", T0, GRACE, {})
    assert plan.claims == (("gone", "aks-gone"),)
    assert bool(plan) and not collect(vms, [], claims[1:], [], "karpenter", T0, GRACE, {})
