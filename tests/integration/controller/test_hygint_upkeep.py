"""Upkeep through the real clients against both emulators: GC ownership, restart recovery, liveness."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from provisioner.azure.compute import AzureCompute
from provisioner.azure.config import AzureConfig
from provisioner.azure.credentials import StaticCredential
from provisioner.controller.fleet import Fleet
from provisioner.controller.launch import TAG_CLUSTER, TAG_NODECLAIM, TAG_NODEPOOL
from provisioner.controller.manager import ControllerOptions
from provisioner.controller.service import Service, ServiceOptions
from provisioner.controller.upkeep import Upkeep, UpkeepOptions
from provisioner.model.catalog import load_catalog
from provisioner.model.ports import NicSpec, VmSpec
from provisioner.observability.logwriter import LogWriter
from sim.arm.emulator import ArmEmulator
from sim.arm.state import Timings
from sim.kube.emulator import KubeEmulator
from sim.scenarios import founding

IMAGE = "/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images/2204gen2containerd/versions/1"


def _compute(arm: ArmEmulator) -> AzureCompute:
    return AzureCompute(AzureConfig.for_emulator(arm.endpoint.as_dict(), StaticCredential("karp-test"), max_retries=0))


def _make(compute: AzureCompute, arm: ArmEmulator, name: str, tags: dict[str, str], vm: bool = True) -> None:
    nic = compute.create_nic(NicSpec(name, arm.endpoint.subnet_id, tags))
    if vm:
        compute.begin_create_vm(VmSpec(name, "Standard_D2s_v5", nic.id, IMAGE, zone="1", tags=tags)).result(30)


@dataclass
class NoClaims:
    calls: list[str] = field(default_factory=list)

    def fleet(self) -> Fleet:
        return Fleet()

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self.calls.append(name)


@dataclass
class Tracker:
    records: dict[str, Any] = field(default_factory=dict)

    def store(self, record: Any) -> None:
        self.records[record.name] = record


def test_hygint_gc_deletes_only_what_our_tags_prove_is_ours() -> None:
    with ArmEmulator(timings=Timings(vm_create_s=0.05, vm_delete_s=0.02, nic_s=0.01)) as arm:
        compute = _compute(arm)
        try:
            ours = {TAG_CLUSTER: "karpenter", TAG_NODEPOOL: "gp"}
            _make(compute, arm, "aks-gp-orphan", {**ours, TAG_NODECLAIM: "gp-orphan"})
            _make(compute, arm, "aks-gp-nicleft", {**ours, TAG_NODECLAIM: "gp-nicleft"}, vm=False)
            _make(compute, arm, "aks-gp-live", {**ours, TAG_NODECLAIM: "gp-live"})
            _make(compute, arm, "aks-untagged", {})
            _make(compute, arm, "aks-other", {TAG_CLUSTER: "another-cluster", TAG_NODECLAIM: "gp-x"})
            _make(compute, arm, "jumpbox", {"owner": "ops"})
            upkeep = Upkeep(UpkeepOptions("karpenter", gc_grace=0.0), NoClaims(), compute,
                            Tracker({"gp-live": type("R", (), {"name": "gp-live", "conditions": ()})()}),
                            LogWriter(level="ERROR"))
            now = upkeep.clock()
            upkeep.collect_garbage(Fleet(), now)
            upkeep.collect_garbage(Fleet(), upkeep.clock())  # the orphan's NIC is free once its VM is gone
            assert set(arm.vms) == {"aks-gp-live", "aks-untagged", "aks-other", "jumpbox"}
            assert set(arm.nics) == {"aks-gp-live", "aks-untagged", "aks-other", "jumpbox"}
            assert upkeep.stats["gc_vms"] == 1 and upkeep.stats["gc_nics"] == 2
            deletes = [(r.op, r.path.rsplit("/", 1)[-1]) for r in arm.request_log if r.method == "DELETE"]
            assert {name for _, name in deletes} == {"aks-gp-orphan", "aks-gp-nicleft"}
        finally:
            compute.close()


@pytest.fixture
def world() -> Iterator[tuple[KubeEmulator, ArmEmulator]]:
    kube = KubeEmulator(region=founding.REGION, node_ready_delay=0.1, node_gone_delay=0.1, tick=0.05)
    founding.seed_cluster(kube)
    bridge = founding.NodeBridge(kube)
    arm = ArmEmulator(founding.REGION, vm_created_hook=bridge.created, vm_deleted_hook=bridge.deleted,
                      timings=Timings(vm_create_s=0.1, vm_delete_s=0.02, nic_s=0.01))
    kube.start()
    arm.start()
    try:
        yield kube, arm
    finally:
        arm.stop()
        kube.stop()


def _service(kube: KubeEmulator, arm: ArmEmulator, identity: str, log: LogWriter, **upkeep: Any) -> Service:
    compute = _compute(arm)
    options = ControllerOptions(cluster="karpenter", subnet_id=arm.endpoint.subnet_id, batch_idle=0.2, batch_max=1.0,
                                requeue=1.0, tick=0.05, failed_linger=0.3)
    settings = {"recovery_interval": 0.2, "recovery_grace": 1.0, "liveness_interval": 0.2, "gc_interval": 0.3,
                "gc_grace": 1.0, "tick": 0.1, **upkeep}
    service_options = ServiceOptions(UpkeepOptions("karpenter", **settings), identity=identity, lease_duration=1.5,
                                     renew_deadline=1.0, retry_period=0.1, metrics_port=None, health_port=None,
                                     shutdown_grace=3.0, sample_every=0.2)
    service = Service.connect(kube.kubeconfig, None, compute, options, founding.REGION, log, service_options,
                              load_catalog(founding.REGION).types)
    service.closers.append(compute.close)
    return service


def _claim(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "general-purpose",
                                              "node.kubernetes.io/instance-type": "Standard_D2s_v5",
                                              "karpenter.sh/capacity-type": "on-demand"}},
        "spec": {"requirements": [], "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass",
                                                      "name": "default"}},
    }


def test_hygint_a_new_leader_adopts_what_an_earlier_run_left_and_cleans_the_rest(
    world: tuple[KubeEmulator, ArmEmulator], wait_until: Any
) -> None:
    kube, arm = world
    setup = _compute(arm)
    tags = {TAG_CLUSTER: "karpenter", TAG_NODEPOOL: "general-purpose"}
    # an earlier run: claim + VM (crashed before writing Launched), claim with no VM, VM with no claim
    kube.create("nodeclaims", _claim("general-purpose-vmleft"))
    _make(setup, arm, "aks-general-purpose-vmleft", {**tags, TAG_NODECLAIM: "general-purpose-vmleft"})
    kube.create("nodeclaims", _claim("general-purpose-novm"))
    _make(setup, arm, "aks-general-purpose-novm", {**tags, TAG_NODECLAIM: "general-purpose-novm"}, vm=False)
    _make(setup, arm, "aks-general-purpose-gone", {**tags, TAG_NODECLAIM: "general-purpose-gone"})
    setup.close()
    log = LogWriter(level="DEBUG")
    records: list[dict[str, Any]] = []
    log.subscribe(records.append)
    service = _service(kube, arm, "replica-a", log, disruption=False).start()  # the adopted node is empty
    try:
        def adopted() -> bool:
            claim = kube.get("nodeclaims", "general-purpose-vmleft")
            conditions = {c["type"]: c["status"] for c in (claim or {}).get("status", {}).get("conditions", [])}
            return conditions.get("Launched") == "True" and conditions.get("Initialized") == "True"

        wait_until(adopted, 15)
        wait_until(lambda: kube.get("nodeclaims", "general-purpose-novm") is None, 10)
        wait_until(lambda: set(arm.vms) == {"aks-general-purpose-vmleft"} and set(arm.nics) == {"aks-general-purpose-vmleft"}, 10)
        creates = [r for r in arm.request_log if r.op == "create_vm" and r.method == "PUT"]
        assert len(creates) == 2  # the two made above: recovery created nothing
        assert any(r["event"] == "vm.adopted" for r in records)
    finally:
        service.stop(grace=2.0)


def test_hygint_launch_timeout_deletes_vm_and_claim_and_marks_the_nodepool(
    world: tuple[KubeEmulator, ArmEmulator], wait_until: Any
) -> None:
    kube, arm = world
    arm.set_timings(Timings(vm_create_s=60.0, vm_delete_s=0.02, nic_s=0.01))  # the create never ends in time
    service = _service(kube, arm, "replica-a", LogWriter(level="ERROR"), launch_timeout=1.5).start()
    try:
        founding.set_replicas(kube, 1)
        wait_until(lambda: arm.vms, 15)
        first = next(iter(arm.vms))

        def condition() -> dict[str, Any] | None:
            pool = kube.get("nodepools", "general-purpose") or {}
            return next((c for c in (pool.get("status") or {}).get("conditions") or []
                         if c["type"] == "NodeRegistrationHealthy"), None)

        health = wait_until(condition, 10)
        assert health["status"] == "False" and health["reason"] == "LaunchTimeout"
        assert first.removeprefix("aks-") in health["message"]
        wait_until(lambda: first not in arm.vms and kube.get("nodeclaims", first.removeprefix("aks-")) is None, 10)
    finally:
        service.stop(grace=1.0)
