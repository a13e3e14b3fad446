"""Disruption through the real clients against both emulators: empty nodes go, expired nodes are replaced."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from provisioner.azure.compute import AzureCompute
from provisioner.azure.config import AzureConfig
from provisioner.azure.credentials import StaticCredential
from provisioner.controller.manager import ControllerOptions
from provisioner.controller.service import Service, ServiceOptions
from provisioner.controller.upkeep import UpkeepOptions
from provisioner.model.catalog import load_catalog
from provisioner.observability.logwriter import LogWriter
from sim.arm.emulator import ArmEmulator
from sim.arm.state import Timings
from sim.kube.emulator import KubeEmulator
from sim.scenarios import founding


def _pool(disruption: dict[str, Any], expire_after: str = "720h") -> dict[str, Any]:
    pool = founding.nodepool()
    pool["spec"]["disruption"] = disruption
    pool["spec"]["template"]["spec"]["expireAfter"] = expire_after
    pool["spec"]["template"]["spec"]["requirements"].append(
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D2s_v5"]})
    return pool


@pytest.fixture
def stage() -> Iterator[Callable[[dict[str, Any]], tuple[KubeEmulator, ArmEmulator, list[dict[str, Any]], Service]]]:
    closers: list[Callable[[], Any]] = []

    def start(pool: dict[str, Any]) -> tuple[KubeEmulator, ArmEmulator, list[dict[str, Any]], Service]:
        kube = KubeEmulator(region=founding.REGION, node_ready_delay=0.1, node_gone_delay=0.1, tick=0.05)
        founding.seed_cluster(kube, pool)
        bridge = founding.NodeBridge(kube)
        arm = ArmEmulator(founding.REGION, vm_created_hook=bridge.created, vm_deleted_hook=bridge.deleted,
                          timings=Timings(vm_create_s=0.1, vm_delete_s=0.02, nic_s=0.01))
        kube.start()
        arm.start()
        closers.extend([kube.stop, arm.stop])
        compute = AzureCompute(AzureConfig.for_emulator(arm.endpoint.as_dict(), StaticCredential("karp-test"), max_retries=0))
        log = LogWriter(level="DEBUG")
        records: list[dict[str, Any]] = []
        log.subscribe(records.append)
        options = ControllerOptions(cluster="karpenter", subnet_id=arm.endpoint.subnet_id, batch_idle=0.2,
                                    batch_max=1.0, requeue=1.0, tick=0.05, failed_linger=0.3)
        upkeep = UpkeepOptions("karpenter", disruption_interval=0.3, recovery_interval=0.3, tick=0.1)
        service = Service.connect(kube.kubeconfig, None, compute, options, founding.REGION, log,
                                  ServiceOptions(upkeep, identity="a", lease_duration=1.5, renew_deadline=1.0,
                                                 retry_period=0.1, metrics_port=None, health_port=None),
                                  load_catalog(founding.REGION).types)
        service.closers.append(compute.close)
        closers.insert(0, lambda: service.stop(grace=1.0))
        service.start()
        return kube, arm, records, service

    yield start
    for close in closers:
        close()


def _running(kube: KubeEmulator) -> int:
    return sum(1 for p in kube.objects("pods", "default")
               if p["metadata"]["name"].startswith("inflate-") and (p.get("status") or {}).get("phase") == "Running")


def test_hygint_empty_nodes_are_removed_after_consolidate_after(wait_until: Any, stage: Any) -> None:
    kube, arm, records, _ = stage(_pool({"consolidationPolicy": "WhenEmpty", "consolidateAfter": "1s",
                                      "budgets": [{"nodes": "100%"}]}))
    founding.set_replicas(kube, 2)
    wait_until(lambda: _running(kube) == 2, 15)
    vms = set(arm.vms)
    assert vms
    founding.set_replicas(kube, 0)
    wait_until(lambda: not arm.vms and not kube.objects("nodeclaims"), 15)
    assert wait_until(lambda: not arm.nics, 5)
    started = [r for r in records if r["event"] == "disruption.started"]
    assert {r["reason"] for r in started} == {"Empty"} and len(started) == len(vms)


def test_hygint_expired_nodes_are_replaced_and_pods_keep_running(wait_until: Any, stage: Any) -> None:
    kube, arm, records, _ = stage(_pool({"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"},
                                        expire_after="3s"))
    founding.set_replicas(kube, 1)
    wait_until(lambda: _running(kube) == 1, 15)
    first = set(arm.vms)
    wait_until(lambda: any(r["event"] == "disruption.started" and r["reason"] == "Expired" for r in records), 10)
    kube.store.mutate(kube.kind("nodepools"), "", "general-purpose",  # the replacement must not expire as well
                      lambda o: o["spec"]["template"]["spec"].update(expireAfter="Never"))
    wait_until(lambda: _running(kube) == 1 and set(arm.vms) and not set(arm.vms) & first, 30)  # on a new node


def test_hygint_do_not_disrupt_holds_an_expired_node(wait_until: Any, stage: Any) -> None:
    kube, arm, records, service = stage(_pool({"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"},
                                              expire_after="1s"))
    kube.store.mutate(kube.kind("deployments"), "default", "inflate", lambda o: o["spec"]["template"]["metadata"].update(
        annotations={"karpenter.sh/do-not-disrupt": "true"}))
    founding.set_replicas(kube, 1)
    wait_until(lambda: _running(kube) == 1, 15)
    vms = set(arm.vms)

    def held() -> bool:
        upkeep = service.upkeep
        return upkeep is not None and any("do-not-disrupt" in why for why in upkeep.held.values())

    wait_until(held, 10)  # expired (1 s) and looked at by disruption, but held
    assert set(arm.vms) == vms and _running(kube) == 1
    assert not any(r["event"] == "disruption.started" for r in records)
