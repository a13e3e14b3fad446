"""The provisioner against both emulators, through the official Kubernetes client and the Azure SDK."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from provisioner.model.catalog import load_catalog
from sim.arm.faults import FaultRule
from sim.scenarios import founding
from sim.scenarios.harness import Stage, StageTimings

FAST = StageTimings(vm_create=0.1, node_ready=0.1, batch_idle=0.3, batch_max=3.0, requeue=1.0, quota_refresh=1.0,
                    failed_linger=0.5, tick=0.05)
CATALOG = load_catalog("westus2")


def _pool(capacity: tuple[str, ...] = ("on-demand",), limits: dict[str, str] | None = None) -> dict[str, Any]:
    pool = copy.deepcopy(founding.nodepool())
    for req in pool["spec"]["template"]["spec"]["requirements"]:
        if req["key"] == "karpenter.sh/capacity-type":
            req["values"] = list(capacity)
    pool["spec"]["limits"] = limits or {"cpu": "1000"}
    return pool


def _vcpus(stage: Stage) -> int:
    total = 0
    for vm in stage.arm.vms.values():
        it = CATALOG.get(vm.size)
        assert it is not None
        total += it.vcpus
    return total


def _reasons(stage: Stage) -> list[str]:
    return [r.get("reason", "") for r in stage.logged("nodeclaim.launch_failed")]


def test_ctrlint_founding_quota_aware_places_what_fits(tmp_path: Any) -> None:
    with Stage("quota-aware", quotas={"cores": 20}, usages={"cores": 14}, timings=FAST,
               log_path=str(tmp_path / "qa.log")) as stage:
        stage.scale(10)
        assert stage.wait_for(lambda: stage.counts() == (4, 6), timeout=20), stage.counts()
        assert stage.wait_for(lambda: bool(stage.events("NodePool", "QuotaExceeded")), timeout=10)
        assert _reasons(stage) == []  # Azure refused nothing
        assert _vcpus(stage) <= 6
        pool_events = [e["message"] for e in stage.events("NodePool", "QuotaExceeded")]
        assert all("cores" in m and "limit 20" in m for m in pool_events)
        assert any("a limit of 28" in m for m in pool_events), pool_events
        pod_events = stage.events("Pod", "FailedScheduling")
        assert any("regional vCPU quota cores" in e["message"] for e in pod_events)
        assert stage.events("Pod", "Nominated")
        def all_ready() -> bool:
            return all(c["type"] != "Ready" or c["status"] == "True" for claim in stage.kube.objects("nodeclaims")
                       for c in claim["status"]["conditions"])

        assert stage.wait_for(all_ready, timeout=5)
        claims = stage.kube.objects("nodeclaims")
        assert len(claims) == 2
        for claim in claims:
            status = {c["type"]: c["status"] for c in claim["status"]["conditions"]}
            assert status == {"Launched": "True", "Registered": "True", "Initialized": "True", "Ready": "True"}
            node = stage.kube.get("nodes", claim["status"]["nodeName"])
            assert node is not None
            assert not any(t["key"] == "karpenter.sh/unregistered" for t in node["spec"].get("taints") or [])
            assert node["metadata"]["labels"]["karpenter.sh/nodepool"] == "general-purpose"
        blocked = stage.logged("quota.blocked")[0]
        assert blocked["quota"]["name"] == "cores" and blocked["quota"]["limit"] == 20


def test_ctrlint_founding_karpenter_mode_repeats_the_409() -> None:
    with Stage("karpenter", quotas={"cores": 20}, usages={"cores": 14}, timings=FAST) as stage:
        stage.scale(10)
        assert stage.wait_for(lambda: len(_reasons(stage)) >= 3, timeout=20)
        assert set(_reasons(stage)) == {"SubscriptionQuotaReached"}
        failed = stage.logged("nodeclaim.launch_failed")[0]
        assert failed["quota"] == {"scope": "regional", "name": "cores", "region": "westus2", "limit": 20,
                                   "usage": 14, "required": 16, "newLimit": 30}
        assert stage.wait_for(lambda: not stage.arm.nics, timeout=5)
        assert stage.arm.vms == {}
        assert stage.counts()[0] == 0
        assert stage.controller is not None
        assert stage.controller.unavailable.entries(stage.controller.clock()) == []  # regional not remembered
        assert stage.events("NodeClaim", "InsufficientCapacityError")


def test_ctrlint_family_quota_refusal_moves_to_another_family() -> None:
    # quota-blind: the cheapest size's family has no quota; the refusal is remembered and the plan redone
    with Stage("karpenter", quotas={"cores": 100, "standardDLSv5Family": 0}, timings=FAST) as stage:
        stage.scale(10)
        assert stage.wait_for(lambda: stage.counts()[0] == 10, timeout=25), (stage.counts(), _reasons(stage))
        failed = stage.logged("nodeclaim.launch_failed")
        assert failed and failed[0]["quota"]["scope"] == "family"
        assert all(CATALOG.get(vm.size).family != "standardDLSv5Family" for vm in stage.arm.vms.values())  # type: ignore[union-attr]
    # quota-aware: the planner never asks that family in the first place
    with Stage("quota-aware", quotas={"cores": 100, "standardDLSv5Family": 0}, timings=FAST) as stage:
        stage.scale(10)
        assert stage.wait_for(lambda: stage.counts()[0] == 10, timeout=25)
        assert _reasons(stage) == []


def test_ctrlint_spot_quota_falls_back_to_on_demand() -> None:
    pool = _pool(("spot", "on-demand"))
    with Stage("karpenter", quotas={"cores": 100, "lowPriorityCores": 0}, nodepool=pool, timings=FAST) as stage:
        stage.scale(3)
        assert stage.wait_for(lambda: stage.counts()[0] == 3, timeout=25), (stage.counts(), _reasons(stage))
        failed = stage.logged("nodeclaim.launch_failed")
        assert failed and failed[0]["quota"]["scope"] == "spot"
        assert stage.arm.vms and all(not vm.spot for vm in stage.arm.vms.values())
    with Stage("quota-aware", quotas={"cores": 100, "lowPriorityCores": 0}, nodepool=pool, timings=FAST) as stage:
        stage.scale(3)
        assert stage.wait_for(lambda: stage.counts()[0] == 3, timeout=25)
        assert _reasons(stage) == [] and all(not vm.spot for vm in stage.arm.vms.values())


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        (FaultRule("sku_not_available", op="create_vm", zone="1"), "SKUNotAvailable"),
        (FaultRule("zonal_allocation_failed", op="create_vm", zone="1"), "ZonalAllocationFailure"),
    ],
)
def test_ctrlint_sku_and_zonal_failures_are_avoided_next_time(rule: FaultRule, reason: str) -> None:
    with Stage("quota-aware", quotas={"cores": 100}, faults=[rule], timings=FAST) as stage:
        stage.scale(3)
        assert stage.wait_for(lambda: stage.counts()[0] == 3, timeout=25), (stage.counts(), _reasons(stage))
        assert _reasons(stage)[0] == reason
        assert all(vm.zone != "1" for vm in stage.arm.vms.values())
        assert len(stage.arm.nics) == len(stage.arm.vms)  # the failed create left no NIC behind


def test_ctrlint_quota_raised_mid_run_places_the_rest() -> None:
    with Stage("quota-aware", quotas={"cores": 20}, usages={"cores": 14}, timings=FAST) as stage:
        stage.scale(10)
        assert stage.wait_for(lambda: stage.counts() == (4, 6), timeout=20)
        stage.arm.set_limit("cores", 40)
        assert stage.wait_for(lambda: stage.counts() == (10, 0), timeout=20), stage.counts()
        assert _reasons(stage) == []


def test_ctrlint_nodepool_limit_is_never_exceeded() -> None:
    with Stage("quota-aware", quotas={"cores": 100}, nodepool=_pool(limits={"cpu": "4"}), timings=FAST) as stage:
        stage.scale(10)
        assert stage.wait_for(lambda: stage.counts()[0] == 3, timeout=20), stage.counts()
        stage.settle(minimum=1.0, maximum=5.0, quiet=1.5)
        assert _vcpus(stage) <= 4
        assert stage.counts() == (3, 7)
        assert stage.logged("nodepool.limit_reached")


def test_ctrlint_stale_quota_view_refusal_is_remembered_and_replanned() -> None:
    # the provisioner read 6 vCPUs of headroom; another consumer takes 4 of them before it creates
    slow = StageTimings(vm_create=0.1, node_ready=0.1, batch_idle=0.3, batch_max=3.0, requeue=1.0,
                        quota_refresh=600.0, failed_linger=0.5, tick=0.05)
    with Stage("quota-aware", quotas={"cores": 20}, usages={"cores": 14}, timings=slow) as stage:
        stage.arm.set_limit("cores", 16)
        stage.scale(10)
        assert stage.wait_for(lambda: bool(_reasons(stage)), timeout=20)
        assert "SubscriptionQuotaReached" in _reasons(stage)
        assert stage.wait_for(lambda: stage.counts()[0] >= 1, timeout=20), stage.counts()
        stage.settle(minimum=1.0, maximum=6.0, quiet=1.5)
        assert _vcpus(stage) <= 2  # what the real limit allows
        assert stage.controller is not None
        live = stage.controller.unavailable.entries(stage.controller.clock())
        assert any(e.scope == "regional" for e in live)
        refusals = len(_reasons(stage))
        stage.settle(minimum=2.0, maximum=3.0, quiet=3.0)
        assert len(_reasons(stage)) == refusals  # no retry loop into the same quota
        assert not stage.arm.nics.keys() - stage.arm.vms.keys()  # no NIC leaked
