"""Quota enforcement through the real SDK clients: Azure's wording and arithmetic as usage moves."""

from __future__ import annotations

from typing import Any

import pytest

from provisioner.azure import AzureCompute, QuotaClient
from provisioner.model.errors import QuotaExceeded
from sim.arm import ArmEmulator

FOUNDING = (
    "Operation could not be completed as it results in exceeding approved Total Regional Cores quota. "
    "Additional details - Deployment Model: Resource Manager, Location: westus2, Current Limit: 20, "
    "Current Usage: 14, Additional Required: 16, (Minimum) New Limit Required: 30. Submit a request for "
    "Quota increase at https://aka.ms/ProdportalCRP/#blade/Microsoft_Azure_Capacity/UsageAndQuota.ReactView/"
    "Parameters/%7B%22subscriptionId%22:%22<sub>%22,%22command%22:%22openQuotaApprovalBlade%22,%22quotas%22:"
    "[%7B%22location%22:%22westus2%22,%22providerId%22:%22Microsoft.Compute%22,%22resourceName%22:%22cores%22,"
    "%22quotaRequest%22:%7B%22properties%22:%7B%22limit%22:30,%22unit%22:%22Count%22,%22name%22:%7B%22value%22:"
    "%22cores%22%7D%7D%7D%7D]%7D by specifying parameters listed in the \u2018Details\u2019 section for deployment "
    "to succeed. Please read more about quota limits at "
    "https://docs.microsoft.com/en-us/azure/azure-supportability/regional-quota-requests"
)


def test_founding_refusal_is_byte_for_byte(fresh: ArmEmulator, compute: AzureCompute, launch: Any) -> None:
    with pytest.raises(QuotaExceeded) as caught:
        launch(compute, fresh, "aks-general-purpose-pq7gl", "Standard_D16ls_v5").result(timeout=10)
    error = caught.value
    assert error.code == "OperationNotAllowed"
    assert error.status == 409
    assert error.message.replace(fresh.endpoint.subscription, "<sub>") == FOUNDING
    assert (error.scope, error.quota, error.limit, error.usage, error.required, error.new_limit) == (
        "regional", "cores", 20, 14, 16, 30,
    )
    assert error.category == "regional-vcpu-quota"
    put = [r for r in fresh.request_log if r.op == "create_vm"]
    assert [(r.status, r.error_code) for r in put] == [(409, "OperationNotAllowed")]
    assert "aks-general-purpose-pq7gl" not in fresh.vms


def test_usage_moves_with_creates_and_deletes(fresh: ArmEmulator, compute: AzureCompute, launch: Any) -> None:
    assert compute.read_quota().items["cores"].usage == 14
    vm = launch(compute, fresh, "aks-move-a", "Standard_D4s_v5").result(timeout=10)
    assert vm.provisioning_state == "Succeeded"
    snapshot = compute.read_quota()
    assert snapshot.source == "azure"
    assert snapshot.items["cores"].usage == 18
    assert snapshot.items["standardDSv5Family"].usage == 4
    # 18 + 4 > 20: the regional quota refuses the next 4-vCPU VM with today's numbers
    with pytest.raises(QuotaExceeded) as caught:
        launch(compute, fresh, "aks-move-b", "Standard_D4s_v5").result(timeout=10)
    assert (caught.value.usage, caught.value.required, caught.value.new_limit) == (18, 4, 22)
    compute.delete_vm("aks-move-a")
    assert compute.read_quota().items["cores"].usage == 14
    # the failed create left no charge behind; after the delete the same create fits
    assert launch(compute, fresh, "aks-move-b", "Standard_D4s_v5").result(timeout=10).size == "Standard_D4s_v5"
    assert compute.read_quota().items["cores"].usage == 18


def test_family_is_checked_before_regional(fresh: ArmEmulator, compute: AzureCompute, launch: Any) -> None:
    fresh.reset(quotas={"cores": 20, "standardDLSv5Family": 8}, usages={"cores": 14})
    with pytest.raises(QuotaExceeded) as caught:
        launch(compute, fresh, "aks-family", "Standard_D16ls_v5").result(timeout=10)
    error = caught.value
    assert (error.scope, error.quota, error.limit, error.usage, error.required, error.new_limit) == (
        "family", "standardDLSv5Family", 8, 0, 16, 16,
    )
    assert "exceeding approved standardDLSv5Family Cores quota" in error.message
    assert error.message.endswith("azure-supportability/per-vm-quota-requests")


def test_spot_counts_only_against_low_priority(fresh: ArmEmulator, compute: AzureCompute, launch: Any) -> None:
    fresh.reset(quotas={"cores": 20, "lowPriorityCores": 10}, usages={"cores": 20, "lowPriorityCores": 2})
    vm = launch(compute, fresh, "aks-spot-a", "Standard_D8s_v5", spot=True).result(timeout=10)
    assert vm.spot is True
    usage = compute.read_quota().items
    assert (usage["lowPriorityCores"].usage, usage["cores"].usage, usage["standardDSv5Family"].usage) == (10, 20, 0)
    with pytest.raises(QuotaExceeded) as caught:
        launch(compute, fresh, "aks-spot-b", "Standard_D2s_v5", spot=True).result(timeout=10)
    error = caught.value
    assert (error.scope, error.quota, error.limit, error.usage, error.required, error.new_limit) == (
        "spot", "lowPriorityCores", 10, 10, 2, 12,
    )
    assert "exceeding approved LowPriorityCores quota" in error.message
    assert error.message.endswith("low-priority-quota")


def test_quota_increase_unblocks_the_create(fresh: ArmEmulator, compute: AzureCompute, launch: Any,
                                            config_for: Any) -> None:
    with pytest.raises(QuotaExceeded) as caught:
        launch(compute, fresh, "aks-grow", "Standard_D16ls_v5").result(timeout=10)
    quota = QuotaClient(config_for(fresh))  # closed with the module
    assert quota.get_limit("cores").limit == 20
    request = quota.request_increase("cores", caught.value.new_limit)
    assert request.id and request.succeeded and request.requested_limit == 30
    assert quota.request_status(request.id).state == "Succeeded"
    assert quota.get_limit("cores").limit == 30
    assert compute.read_quota().items["cores"].limit == 30
    vm = compute.begin_create_vm(_spec_like(compute, fresh, "aks-grow")).result(timeout=10)
    assert vm.size == "Standard_D16ls_v5"
    assert compute.read_quota().items["cores"].usage == 30


def test_quota_increase_waits_then_can_be_rejected(fresh: ArmEmulator, config_for: Any) -> None:
    fresh.set_quota_policy(ceiling=100, delay_s=30.0)
    quota = QuotaClient(config_for(fresh))  # closed with the module
    pending = quota.request_increase("standardDLSv5Family", 64)
    assert pending.state == "InProgress" and not pending.done
    assert quota.get_limit("standardDLSv5Family").limit == 100  # not yet
    fresh.set_quota_policy(ceiling=100, delay_s=0.0)
    rejected = quota.request_increase("standardDLSv5Family", 500)
    assert rejected.state == "Failed"
    assert "above 100" in rejected.message
    assert quota.get_limit("standardDLSv5Family").limit == 100


def _spec_like(compute: AzureCompute, arm: ArmEmulator, name: str) -> Any:
    from provisioner.model.ports import VmSpec

    nic = arm.nics[name]
    return VmSpec(name, "Standard_D16ls_v5", nic.id, "/CommunityGalleries/x/images/y/versions/1")
