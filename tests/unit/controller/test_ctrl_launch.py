from __future__ import annotations

import io
import json
from datetime import timedelta
from typing import Any

from provisioner.controller.launch import Launcher, LaunchRequest
from provisioner.controller.quota_cache import QuotaCache
from provisioner.controller.unavailable import UnavailableOfferings
from provisioner.model.errors import classify
from provisioner.observability.logwriter import LogWriter

SUBNET = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/n"
REGIONAL = (
    "Operation could not be completed as it results in exceeding approved Total Regional Cores quota. "
    "Additional details - Deployment Model: Resource Manager, Location: westus2, Current Limit: 20, "
    "Current Usage: 14, Additional Required: 16, (Minimum) New Limit Required: 30. Submit a request for Quota increase"
)


def _setup(compute: Any, clock: Any) -> tuple[Launcher, io.StringIO, UnavailableOfferings, QuotaCache]:
    out = io.StringIO()
    log = LogWriter(stream=out, level="DEBUG", clock=clock)
    unavailable = UnavailableOfferings()
    quota = QuotaCache(compute.read_quota, timedelta(seconds=60), clock)
    quota.refresh()
    return Launcher(compute, log, unavailable, clock, quota=quota, workers=2), out, unavailable, quota


def _request(it: Any, claim: str = "general-purpose-abcde", capacity: str = "on-demand") -> LaunchRequest:
    return LaunchRequest(claim, "general-purpose", it, capacity, "", "/images/ubuntu", SUBNET, "karpenter")


def _lines(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_ctrl_launch_creates_nic_then_vm_with_owner_tags(compute: Any, clock: Any, instance_type: Any) -> None:
    launcher, out, _, _ = _setup(compute, clock)
    result = launcher.submit(_request(instance_type("Standard_D4ls_v5", 4))).result(timeout=5)
    assert result.ok and result.reason == "Launched"
    assert [c for c in compute.calls if c.startswith("create")] == [
        "create_nic aks-general-purpose-abcde", "create_vm aks-general-purpose-abcde Standard_D4ls_v5"]
    tags = compute.vms["aks-general-purpose-abcde"].tags
    assert tags["karpenter.sh_nodepool"] == "general-purpose"
    assert tags["karpenter.azure.com_cluster"] == "karpenter"
    assert tags["karpenter.azure.com_nodeclaim"] == "general-purpose-abcde"
    events = [r["event"] for r in _lines(out)]
    assert events == ["nodeclaim.instance_selected", "nodeclaim.image_resolved", "nic.creating", "nic.created",
                      "vm.creating", "nodeclaim.launched"]
    assert launcher.create_attempts == 1
    launcher.shutdown()


def test_ctrl_launch_is_idempotent_on_retry(compute: Any, clock: Any, instance_type: Any) -> None:
    launcher, out, _, _ = _setup(compute, clock)
    it = instance_type("Standard_D4ls_v5", 4)
    launcher.submit(_request(it)).result(timeout=5)
    again = launcher.submit(_request(it)).result(timeout=5)
    assert again.ok and again.adopted
    assert sum(c.startswith("create_vm") for c in compute.calls) == 1
    assert len(compute.vms) == 1 and len(compute.nics) == 1
    assert _lines(out)[-1]["event"] == "vm.adopted"
    launcher.shutdown()


def test_ctrl_launch_quota_error_cleans_nic_and_marks_regional(compute: Any, clock: Any, instance_type: Any) -> None:
    launcher, out, unavailable, quota = _setup(compute, clock)
    d16 = instance_type("Standard_D16ls_v5", 16)
    compute.fail_vm["Standard_D16ls_v5"] = classify("OperationNotAllowed", REGIONAL, 409)
    reads_before = quota.reads
    result = launcher.submit(_request(d16)).result(timeout=5)
    assert not result.ok
    assert result.reason == "SubscriptionQuotaReached"
    assert compute.nics == {} and compute.vms == {}
    assert "delete_nic aks-general-purpose-abcde" in compute.calls
    assert unavailable.is_unavailable(d16, "on-demand", "", clock())
    assert not unavailable.is_unavailable(instance_type("Standard_D4ls_v5", 4), "on-demand", "", clock())
    failed = next(r for r in _lines(out) if r["event"] == "nodeclaim.launch_failed")
    assert failed["error.code"] == "OperationNotAllowed"
    assert failed["quota"] == {"scope": "regional", "name": "cores", "region": "westus2", "limit": 20, "usage": 14,
                               "required": 16, "newLimit": 30}
    assert failed["NodeClaim"] == {"name": "general-purpose-abcde"}
    assert launcher.quota_errors == 1
    assert quota.reads == reads_before + 1 and quota.in_flight == []
    launcher.shutdown()


def test_ctrl_launch_async_failure_removes_failed_vm(compute: Any, clock: Any, instance_type: Any) -> None:
    launcher, _, unavailable, _ = _setup(compute, clock)
    d4 = instance_type("Standard_D4s_v5", 4, "standardDSv5Family")
    compute.fail_vm["Standard_D4s_v5"] = classify("ZonalAllocationFailed", "Allocation failed in this zone.", 200)
    compute.leave_failed_vm = True
    req = LaunchRequest("np-x", "np", d4, "on-demand", "2", "/img", SUBNET, "c")
    result = launcher.submit(req).result(timeout=5)
    assert result.reason == "ZonalAllocationFailure"
    assert compute.vms == {} and compute.nics == {}
    assert unavailable.is_unavailable(d4, "on-demand", "2", clock())
    launcher.shutdown()


def test_ctrl_launch_reserves_quota_while_in_flight(compute: Any, clock: Any, instance_type: Any) -> None:
    import threading

    gate = threading.Event()
    original = compute.begin_create_vm

    class Slow:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def done(self) -> bool:
            return gate.is_set()

        def result(self) -> Any:
            assert gate.wait(5)
            return self.inner.result()

    compute.begin_create_vm = lambda spec: Slow(original(spec))
    launcher, _, _, quota = _setup(compute, clock)
    future = launcher.submit(_request(instance_type("Standard_D4ls_v5", 4)))
    assert quota.headroom("standardDLSv5Family", spot=False) == 2
    assert launcher.in_flight() == ["general-purpose-abcde"]
    compute.quota["cores"] = (20, 18)
    gate.set()
    assert future.result(timeout=5).ok
    assert quota.headroom("standardDLSv5Family", spot=False) == 2
    assert quota.in_flight == []
    launcher.shutdown()
