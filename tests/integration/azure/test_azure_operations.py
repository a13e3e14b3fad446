"""Long-running operations: InProgress then Succeeded/Failed, hooks, idempotent PUTs, concurrency."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from provisioner.azure import AzureCompute
from provisioner.model.errors import AllocationFailed
from provisioner.model.ports import VmInfo, VmSpec
from sim.arm import ArmEmulator, FaultRule, Timings


class Hooks:
    def __init__(self) -> None:
        self.created: list[VmInfo] = []
        self.deleted: list[VmInfo] = []
        self.created_event = threading.Event()
        self.deleted_event = threading.Event()

    def on_created(self, vm: VmInfo) -> None:
        self.created.append(vm)
        self.created_event.set()

    def on_deleted(self, vm: VmInfo) -> None:
        self.deleted.append(vm)
        self.deleted_event.set()


@pytest.fixture(scope="module")
def hooks() -> Hooks:
    return Hooks()


@pytest.fixture(scope="module")
def arm(hooks: Hooks) -> Iterator[ArmEmulator]:
    timings = Timings(vm_create_s=0.3, vm_delete_s=0.2)
    with ArmEmulator(quotas={"cores": 200}, timings=timings, vm_created_hook=hooks.on_created,
                     vm_deleted_hook=hooks.on_deleted) as emulator:
        yield emulator


@pytest.fixture(scope="module")
def compute(arm: ArmEmulator, config_for: Any) -> Iterator[AzureCompute]:
    with AzureCompute(config_for(arm, polling_interval=0.05)) as adapter:
        yield adapter


def test_create_runs_in_the_background_and_fires_the_hook(arm: ArmEmulator, compute: AzureCompute,
                                                          hooks: Hooks, launch: Any) -> None:
    hooks.created_event.clear()
    handle = launch(compute, arm, "aks-lro", "Standard_D4s_v5", zone="2", tags={"karpenter.sh_nodepool": "general"})
    assert not handle.done()  # the operation takes 0.3 s
    assert hooks.created_event.wait(5)
    vm = handle.result(timeout=5)
    assert handle.done()
    assert vm.provisioning_state == "Succeeded" and vm.zone == "2"
    created = hooks.created[-1]
    assert created.name == "aks-lro" and created.size == "Standard_D4s_v5" and created.zone == "2"
    assert created.tags == {"karpenter.sh_nodepool": "general"}
    assert created.provider_id == (
        f"azure:///subscriptions/{arm.endpoint.subscription}/resourceGroups/{arm.endpoint.resource_group}"
        "/providers/Microsoft.Compute/virtualMachines/aks-lro"
    )
    polls = [r for r in arm.request_log if r.op == "get_operation"]
    assert len(polls) >= 2  # saw InProgress at least once, then the end


def test_put_of_an_existing_vm_is_idempotent(arm: ArmEmulator, compute: AzureCompute, launch: Any) -> None:
    first = launch(compute, arm, "aks-same", "Standard_D2s_v5").result(timeout=5)
    arm.clear_log()
    again = compute.begin_create_vm(VmSpec("aks-same", "Standard_D2s_v5", arm.nics["aks-same"].id, "img")).result(5)
    assert again.id == first.id and again.provisioning_state == "Succeeded"
    assert [r.status for r in arm.request_log if r.op == "create_vm"] == [200]
    assert len([vm for vm in arm.vms.values() if vm.name == "aks-same"]) == 1


def test_async_failure_after_the_delay(arm: ArmEmulator, compute: AzureCompute, launch: Any) -> None:
    arm.faults.add(FaultRule("allocation_failed", op="create_vm", sku="Standard_E4s_v5", count=1))
    handle = launch(compute, arm, "aks-lro-fail", "Standard_E4s_v5")
    with pytest.raises(AllocationFailed) as caught:
        handle.result(timeout=5)
    assert caught.value.code == "AllocationFailed"
    assert "sufficient capacity" in caught.value.message


def test_delete_waits_for_the_operation_and_fires_the_hook(arm: ArmEmulator, compute: AzureCompute,
                                                           hooks: Hooks, launch: Any) -> None:
    launch(compute, arm, "aks-gone", "Standard_D2s_v5").result(timeout=5)
    hooks.deleted_event.clear()
    compute.delete_vm("aks-gone")
    assert hooks.deleted_event.is_set()
    assert hooks.deleted[-1].name == "aks-gone"
    assert compute.get_vm("aks-gone") is None
    assert "aks-gone" in arm.nics  # the NIC stays; delete_vm deletes nothing else
    assert arm.nics["aks-gone"].vm_id == ""
    compute.delete_vm("aks-gone")  # deleting again is fine


def test_many_creates_run_side_by_side(arm: ArmEmulator, compute: AzureCompute, launch: Any) -> None:
    handles = [launch(compute, arm, f"aks-par-{i}", "Standard_D2s_v5") for i in range(8)]
    assert not any(h.done() for h in handles[:4])
    vms = [h.result(timeout=10) for h in handles]
    assert {vm.name for vm in vms} == {f"aks-par-{i}" for i in range(8)}
    listed = compute.list_vms({})
    assert {f"aks-par-{i}" for i in range(8)} <= {vm.name for vm in listed}
    assert compute.read_quota().items["standardDSv5Family"].usage >= 16


def test_list_skus_builds_a_priced_catalog(compute: AzureCompute, arm: ArmEmulator) -> None:
    catalog = compute.list_skus()
    d16 = catalog.get("Standard_D16ls_v5")
    assert d16 is not None and d16.vcpus == 16 and d16.family == "standardDLSv5Family"
    assert d16.price_on_demand > 0  # prices come from the bundled catalog
    restricted = catalog.get("Standard_D96as_v4")
    assert restricted is not None and restricted.not_available
    assert catalog.source == "azure"
    assert [r.api_version for r in arm.request_log if r.op == "list_skus"][-1]


def test_nics_listed_by_tag(arm: ArmEmulator, compute: AzureCompute) -> None:
    from provisioner.model.ports import NicSpec

    compute.create_nic(NicSpec("aks-tag-a", arm.endpoint.subnet_id, {"karp.sh_cluster": "one"}))
    compute.create_nic(NicSpec("aks-tag-b", arm.endpoint.subnet_id, {"karp.sh_cluster": "two"}))
    assert [n.name for n in compute.list_nics({"karp.sh_cluster": "one"})] == ["aks-tag-a"]
    compute.delete_nic("aks-tag-b")
    compute.delete_nic("aks-tag-b")  # already gone: fine
    assert compute.list_nics({"karp.sh_cluster": "two"}) == []


def test_put_while_deleting_is_refused(arm: ArmEmulator, compute: AzureCompute, launch: Any) -> None:
    from provisioner.model.errors import UnknownCloudError

    launch(compute, arm, "aks-dying", "Standard_D2s_v5").result(timeout=5)
    poller = compute.clients.compute.virtual_machines.begin_delete(arm.endpoint.resource_group, "aks-dying")
    with pytest.raises(UnknownCloudError) as caught:
        compute.begin_create_vm(VmSpec("aks-dying", "Standard_D2s_v5", arm.nics["aks-dying"].id, "img")).result(5)
    assert caught.value.code == "OperationNotAllowed" and caught.value.status == 409
    assert "marked for deletion" in caught.value.message
    poller.result()
    assert compute.get_vm("aks-dying") is None


def test_every_settled_create_fires_its_hook_once(arm: ArmEmulator, compute: AzureCompute,
                                                  hooks: Hooks, launch: Any) -> None:
    names = [f"aks-many-{n}" for n in range(6)]
    before = len(hooks.created)
    handles = [launch(compute, arm, name, "Standard_D2s_v5") for name in names]
    for handle in handles:
        assert handle.result(timeout=10).provisioning_state == "Succeeded"
    arm.service.settle()
    fired = [vm.name for vm in hooks.created[before:]]
    assert sorted(fired) == sorted(names), "a create settled inside another request must still fire its hook"
