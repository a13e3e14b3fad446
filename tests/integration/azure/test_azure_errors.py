"""Every catalog error the emulator can produce, through the SDK, into the right typed error."""

from __future__ import annotations

import time
from typing import Any

import pytest

from provisioner.azure import AzureCompute
from provisioner.model.errors import (
    AllocationFailed,
    AuthorizationFailed,
    CloudUnavailable,
    ImageNotFound,
    InvalidVmSize,
    NicReserved,
    OverconstrainedAllocation,
    PublicIPLimit,
    QuotaExceeded,
    SkuNotAvailable,
    SubnetFull,
    Throttled,
    UnknownCloudError,
    ZonalAllocationFailed,
)
from provisioner.model.ports import NicSpec, VmSpec
from sim.arm import ArmEmulator, FaultRule, Timings


def test_sku_not_available_from_a_fault_and_from_the_catalog(fresh: ArmEmulator, compute: AzureCompute,
                                                              launch: Any) -> None:
    fresh.faults.add(FaultRule("sku_not_available", op="create_vm", sku="Standard_D4s_v5", zone="2"))
    with pytest.raises(SkuNotAvailable) as caught:
        launch(compute, fresh, "aks-sku-a", "Standard_D4s_v5", zone="2").result(timeout=10)
    assert (caught.value.sku, caught.value.region, caught.value.zones, caught.value.status) == (
        "Standard_D4s_v5", "westus2", "2", 409,
    )
    # zone 1 is not listed: the same size goes through
    assert launch(compute, fresh, "aks-sku-b", "Standard_D4s_v5", zone="1").result(timeout=10).zone == "1"
    # the bundled catalog restricts Standard_D96as_v4 in westus2 for this subscription
    with pytest.raises(SkuNotAvailable) as restricted:
        launch(compute, fresh, "aks-sku-c", "Standard_D96as_v4").result(timeout=10)
    assert restricted.value.sku == "Standard_D96as_v4" and restricted.value.zones == ""


def test_public_ip_limit_and_legacy_quota_wording(fresh: ArmEmulator, compute: AzureCompute, launch: Any) -> None:
    fresh.reset(quotas={"cores": 10}, usages={"cores": 10})
    fresh.faults.add(FaultRule("public_ip_limit", op="create_vm", sku="Standard_D2s_v5", count=1))
    with pytest.raises(PublicIPLimit) as limited:
        launch(compute, fresh, "aks-pip", "Standard_D2s_v5").result(timeout=10)
    assert (limited.value.code, limited.value.status, limited.value.limit) == ("PublicIPCountLimitReached", 400, 20)
    assert limited.value.category == "public-ip-limit"
    fresh.faults.add(FaultRule("legacy_quota", op="create_vm", sku="Standard_D2s_v5", count=1))
    with pytest.raises(QuotaExceeded) as legacy:
        launch(compute, fresh, "aks-legacy", "Standard_D2s_v5").result(timeout=10)
    error = legacy.value
    assert "Maximum allowed: 10, Current in use: 10, Additional requested: 2" in error.message
    assert (error.scope, error.quota, error.limit, error.usage, error.required, error.new_limit) == (
        "regional", "cores", 10, 10, 2, 12,
    )
    assert not [vm for vm in fresh.vms.values() if vm.name in ("aks-pip", "aks-legacy")], "a refused create leaves no VM"


@pytest.mark.parametrize(
    ("kind", "zone", "error_type", "code"),
    [
        ("allocation_failed", "", AllocationFailed, "AllocationFailed"),
        ("zonal_allocation_failed", "3", ZonalAllocationFailed, "ZonalAllocationFailed"),
        ("overconstrained", "", OverconstrainedAllocation, "OverconstrainedAllocationRequest"),
        ("overconstrained", "2", OverconstrainedAllocation, "OverconstrainedZonalAllocationRequest"),
    ],
)
def test_async_failures_come_through_the_operation(fresh: ArmEmulator, compute: AzureCompute, launch: Any,
                                                   kind: str, zone: str, error_type: type, code: str) -> None:
    fresh.faults.add(FaultRule(kind, op="create_vm", count=1))
    with pytest.raises(error_type) as caught:
        launch(compute, fresh, "aks-async", "Standard_D2s_v5", zone=zone).result(timeout=10)
    error: Any = caught.value
    assert error.code == code
    assert error.status == 200  # the PUT was accepted; the operation's status said Failed
    if kind == "overconstrained":
        assert error.zonal is bool(zone)
    assert [r.status for r in fresh.request_log if r.op == "create_vm"] == [201]
    assert fresh.vms["aks-async"].state == "Failed"
    assert compute.read_quota().items["cores"].usage == 14  # a failed VM holds no quota
    # a second PUT of the failed VM allocates again and succeeds (count was 1)
    nic = fresh.nics["aks-async"]
    vm = compute.begin_create_vm(VmSpec("aks-async", "Standard_D2s_v5", nic.id, "img", zone=zone)).result(timeout=10)
    assert vm.provisioning_state == "Succeeded"


def test_nic_in_use_and_reserved(fresh: ArmEmulator, compute: AzureCompute, launch: Any) -> None:
    launch(compute, fresh, "aks-nic", "Standard_D2s_v5").result(timeout=10)
    with pytest.raises(UnknownCloudError) as in_use:
        compute.delete_nic("aks-nic")
    assert in_use.value.code == "NicInUse" and in_use.value.status == 400
    fresh.set_timings(Timings(nic_reservation_s=180))
    compute.delete_vm("aks-nic")
    nic = fresh.nics["aks-nic"]
    with pytest.raises(NicReserved) as reserved:
        compute.begin_create_vm(VmSpec("aks-other", "Standard_D2s_v5", nic.id, "img")).result(timeout=10)
    assert reserved.value.retry_after == 180
    fresh.set_timings(Timings())
    compute.delete_nic("aks-nic")  # free now that the VM is gone
    assert "aks-nic" not in fresh.nics


def test_authorization_failed(fresh: ArmEmulator, compute: AzureCompute, launch: Any) -> None:
    fresh.deny("create_vm")
    with pytest.raises(AuthorizationFailed) as caught:
        launch(compute, fresh, "aks-denied", "Standard_D2s_v5").result(timeout=10)
    assert caught.value.action == "Microsoft.Compute/virtualMachines/write"
    assert caught.value.scope.endswith(fresh.endpoint.resource_group)
    assert caught.value.status == 403


def test_image_not_found_and_invalid_size(fresh: ArmEmulator, compute: AzureCompute, launch: Any) -> None:
    fresh.restrict_images(["/CommunityGalleries/known/images/x/versions/1"])
    with pytest.raises(ImageNotFound) as image:
        launch(compute, fresh, "aks-image", "Standard_D2s_v5").result(timeout=10)
    assert image.value.code == "PlatformImageNotFound" and image.value.status == 404
    assert image.value.image.startswith("/CommunityGalleries/AKSUbuntu")
    fresh.restrict_images(None)
    with pytest.raises(InvalidVmSize) as size:
        launch(compute, fresh, "aks-size", "Standard_B1ls_v9").result(timeout=10)
    assert size.value.code == "InvalidParameter" and size.value.sku == "Standard_B1ls_v9"


def test_server_errors_are_retried_then_unavailable(fresh: ArmEmulator, compute: AzureCompute) -> None:
    fresh.faults.add(FaultRule("server_error", op="get_usages", count=2))
    assert compute.read_quota().items["cores"].limit == 20  # two 500s, then an answer
    assert [r.status for r in fresh.records("get_usages")] == [500, 500, 200]
    fresh.clear_log()
    fresh.faults.add(FaultRule("server_error", op="get_usages", status=503))
    with pytest.raises(CloudUnavailable) as caught:
        compute.read_quota()
    assert caught.value.status == 503 and caught.value.code == "ServiceUnavailable"
    assert len(list(fresh.records("get_usages"))) == 3  # max_retries=2: three attempts, no more


def test_dropped_connections_are_unavailable(fresh: ArmEmulator, compute: AzureCompute) -> None:
    fresh.faults.add(FaultRule("drop", op="get_usages"))
    with pytest.raises(CloudUnavailable) as caught:
        compute.read_quota()
    assert caught.value.category == "launch-failed"
    assert 1 <= len(list(fresh.records("get_usages"))) <= 8


def test_slow_answers_hit_the_timeout(fresh: ArmEmulator, config_for: Any) -> None:
    fresh.faults.add(FaultRule("slow", op="get_usages", delay_s=1.5))
    with AzureCompute(config_for(fresh, timeout=0.3, max_retries=1)) as impatient:
        started = time.monotonic()
        with pytest.raises(CloudUnavailable):
            impatient.read_quota()
        assert time.monotonic() - started < 1.5 * 2


def test_throttling_honours_retry_after(fresh: ArmEmulator, compute: AzureCompute) -> None:
    fresh.faults.add(FaultRule("throttle", op="get_usages", count=1, retry_after=1))
    started = time.monotonic()
    assert compute.read_quota().items["cores"].usage == 14
    assert time.monotonic() - started >= 1.0  # waited as told
    assert [r.status for r in fresh.records("get_usages")] == [429, 200]


def test_throttling_beyond_the_bound_is_returned_at_once(fresh: ArmEmulator, compute: AzureCompute,
                                                         launch: Any) -> None:
    fresh.faults.add(FaultRule("throttle", op="create_vm", retry_after=1200))
    started = time.monotonic()
    with pytest.raises(Throttled) as caught:
        launch(compute, fresh, "aks-throttled", "Standard_D2s_v5").result(timeout=10)
    assert time.monotonic() - started < 5
    assert caught.value.retry_after == 1200 and caught.value.status == 429
    assert caught.value.code == "OperationNotAllowed"
    assert len(list(fresh.records("create_vm"))) == 1


def test_throttling_retries_are_bounded(fresh: ArmEmulator, compute: AzureCompute) -> None:
    fresh.faults.add(FaultRule("throttle", op="get_usages", retry_after=0))
    with pytest.raises(Throttled):
        compute.read_quota()
    assert len(list(fresh.records("get_usages"))) == 3


def test_subnet_full_on_a_small_subnet(config_for: Any) -> None:
    # a /29 keeps 3 usable addresses once Azure's five reserved ones are out
    with ArmEmulator(subnet_prefix="10.1.0.0/29") as small, AzureCompute(config_for(small)) as compute:
        ips = [compute.create_nic(NicSpec(f"aks-n{i}", small.endpoint.subnet_id)).private_ip for i in range(3)]
        assert ips == ["10.1.0.4", "10.1.0.5", "10.1.0.6"]
        assert compute.create_nic(NicSpec("aks-n0", small.endpoint.subnet_id)).private_ip == "10.1.0.4"  # idempotent
        with pytest.raises(SubnetFull) as caught:
            compute.create_nic(NicSpec("aks-n3", small.endpoint.subnet_id))
        assert caught.value.prefix == "10.1.0.0/29" and caught.value.subnet == small.endpoint.subnet_id
        assert caught.value.code == "SubnetIsFull" and caught.value.status == 400
        compute.delete_nic("aks-n1")
        assert compute.create_nic(NicSpec("aks-n3", small.endpoint.subnet_id)).private_ip == "10.1.0.5"


def test_tag_names_with_reserved_characters_are_refused(fresh: ArmEmulator, compute: AzureCompute) -> None:
    with pytest.raises(UnknownCloudError) as caught:
        compute.create_nic(NicSpec("aks-tags", fresh.endpoint.subnet_id, {"karpenter.sh/nodepool": "general"}))
    assert caught.value.code == "InvalidTagNameCharacters" and caught.value.status == 400
    assert caught.value.message == (
        "The tag names 'karpenter.sh/nodepool' have reserved characters '<,>,%,&,\\,?,/' or control characters."
    )
    assert "aks-tags" not in fresh.nics
