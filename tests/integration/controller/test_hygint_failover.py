"""Two replicas on one Lease against both emulators: hand-over, crash fail-over, lost lease, probes."""

from __future__ import annotations

import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from provisioner.azure.compute import AzureCompute
from provisioner.azure.config import AzureConfig
from provisioner.azure.credentials import StaticCredential
from provisioner.controller.manager import ControllerOptions
from provisioner.controller.service import Service, ServiceOptions
from provisioner.controller.upkeep import UpkeepOptions
from provisioner.kube.connection import LEASES
from provisioner.model.catalog import load_catalog
from provisioner.model.errors import CloudUnavailable
from provisioner.model.kube_port import NotLeader
from provisioner.model.ports import NicSpec
from provisioner.observability.logwriter import LogWriter
from sim.arm.emulator import ArmEmulator
from sim.arm.state import Timings
from sim.kube.emulator import KubeEmulator
from sim.scenarios import founding

LEASE = 1.5
RETRY = 0.1


def _wait(condition: Callable[[], Any], timeout: float = 10.0) -> float:
    """Seconds it took for ``condition`` to hold (fails after ``timeout``)."""
    start = time.monotonic()
    pause = threading.Event()
    while time.monotonic() - start < timeout:
        if condition():
            return time.monotonic() - start
        pause.wait(0.02)
    raise AssertionError(f"not met within {timeout} s")


@pytest.fixture
def world() -> Iterator[tuple[KubeEmulator, ArmEmulator, Callable[..., Service]]]:
    kube = KubeEmulator(region=founding.REGION, node_ready_delay=0.1, tick=0.05)
    founding.seed_cluster(kube)
    arm = ArmEmulator(founding.REGION, timings=Timings(vm_create_s=0.1, vm_delete_s=0.02, nic_s=0.01))
    kube.start()
    arm.start()
    services: list[Service] = []
    catalog = load_catalog(founding.REGION).types

    def make(identity: str, port: int | None = None) -> Service:
        compute = AzureCompute(AzureConfig.for_emulator(arm.endpoint.as_dict(), StaticCredential("karp-test"), max_retries=0))
        options = ControllerOptions(cluster="karpenter", subnet_id=arm.endpoint.subnet_id, tick=0.05)
        service_options = ServiceOptions(UpkeepOptions("karpenter", tick=0.1), identity=identity, lease_duration=LEASE,
                                         renew_deadline=1.0, retry_period=RETRY, bind="127.0.0.1", metrics_port=port,
                                         health_port=port, shutdown_grace=2.0, sample_every=0.1)
        service = Service.connect(kube.kubeconfig, None, compute, options, founding.REGION, LogWriter(level="ERROR"),
                                  service_options, catalog)
        service.closers.append(compute.close)
        services.append(service.start())
        return service

    try:
        yield kube, arm, make
    finally:
        for service in services:
            service.kill()
        arm.stop()
        kube.stop()


def _holder(kube: KubeEmulator) -> str:
    lease = kube.get("leases", "karp-leader-election", "karpenter") or {}
    return str((lease.get("spec") or {}).get("holderIdentity") or "")


def test_hygint_standby_cannot_write_and_takes_over_on_release_and_on_crash(
        world: tuple[KubeEmulator, ArmEmulator, Callable[..., Service]]) -> None:
    kube, arm, make = world
    a = make("replica-a")
    _wait(lambda: a.is_leader)
    b = make("replica-b")
    _wait(lambda: b.ready())
    assert not b.is_leader and b.controller is None  # a standby runs no controller
    with pytest.raises(CloudUnavailable):
        b.compute.create_nic(NicSpec("aks-sneaky", arm.endpoint.subnet_id))
    with pytest.raises(NotLeader):
        b.kube.create_nodeclaim({"metadata": {"name": "sneaky"}, "spec": {}})
    assert arm.nics == {} and kube.get("nodeclaims", "sneaky") is None
    # graceful: a releases the Lease, b leads well within the lease duration
    a.stop(grace=1.0)
    handover = _wait(lambda: b.is_leader, LEASE)
    assert handover < LEASE and _holder(kube) == "replica-b"
    assert b.replica is not None and b.replica.terms == 1
    _wait(lambda: b.controller is not None)
    # crash: b dies holding the Lease; c takes over once it expires
    c = make("replica-c")
    _wait(lambda: c.ready())
    b.kill()
    takeover = _wait(lambda: c.is_leader, LEASE + 2.0)
    # within the lease duration as the Lease records it (whole seconds: 1.5 s is written as 2), plus
    # scheduling slack: a standby wakes when the lease it saw lapses
    assert takeover <= round(LEASE) + 2 * RETRY, takeover
    assert _holder(kube) == "replica-c"


def test_hygint_a_leader_that_loses_its_lease_stops_writing_at_once(
        world: tuple[KubeEmulator, ArmEmulator, Callable[..., Service]]) -> None:
    kube, _, make = world
    a = make("replica-a")
    _wait(lambda: a.is_leader and a.controller is not None)

    def steal(lease: dict[str, Any]) -> None:
        lease["spec"]["holderIdentity"] = "intruder"
        lease["spec"]["renewTime"] = "2026-11-29T00:00:00.000000Z"

    kube.store.mutate(kube.kind(LEASES.plural), "karpenter", "karp-leader-election", steal)
    stepped_down = _wait(lambda: not a.gate.is_leader, 3.0)
    assert stepped_down <= 1.0 + 0.3  # the gate closes within renew_deadline, whatever the threads do
    with pytest.raises(NotLeader):
        a.kube.create_nodeclaim({"metadata": {"name": "late"}, "spec": {}})
    with pytest.raises(CloudUnavailable):
        a.compute.delete_vm("aks-anything")
    assert a.replica is not None
    _wait(lambda: a.replica is not None and a.replica.term is None, 3.0)  # the term was stopped


def test_hygint_metrics_and_probes_of_a_replica(world: tuple[KubeEmulator, ArmEmulator, Callable[..., Service]]) -> None:
    _, _, make = world
    a = make("replica-a", port=0)
    _wait(lambda: a.is_leader)
    url = a.endpoints[0].url

    def scrape() -> str:
        with urllib.request.urlopen(url + "/metrics", timeout=5) as answer:
            return str(answer.read().decode())

    _wait(lambda: "karp_leader 1.0" in scrape(), 5)
    text = scrape()
    for name in ("karp_pods_pending", "karp_nodeclaims{state=\"launching\"}", "karp_quota_headroom_vcpus",
                 "karp_leader_transitions_total 1.0", "karp_scheduling_duration_seconds_bucket"):
        assert name in text, name
    for path in ("/healthz", "/readyz"):
        with urllib.request.urlopen(url + path, timeout=5) as answer:
            assert answer.status == 200 and answer.read() == b"ok\n"


def test_hygint_assemble_service_from_settings(world: tuple[KubeEmulator, ArmEmulator, Callable[..., Service]],
                                               monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """``karp-provisioner run``'s composition: settings in, a leader-elected replica with probes out."""
    import provisioner.azure.compute as azure_compute
    from provisioner.controller.service import assemble_service
    from provisioner.settings import Settings

    kube, arm, _ = world
    real = azure_compute.AzureCompute
    seen: list[Any] = []

    def offline(config: AzureConfig) -> AzureCompute:
        seen.append(config)
        return real(AzureConfig.for_emulator(arm.endpoint.as_dict(), StaticCredential("karp-test"), max_retries=0))

    monkeypatch.setattr(azure_compute, "AzureCompute", offline)
    settings = Settings.from_sources(
        subscription_id=arm.endpoint.subscription, resource_group="karpenter",
        node_resource_group=arm.endpoint.resource_group, location="westus2", log_file=str(tmp_path / "l"),
        log_level="ERROR", cluster_name="karpenter", subnet_id=arm.endpoint.subnet_id, mode="quota-aware",
        batch_idle_seconds=0.2, batch_max_seconds=1.0, quota_refresh_seconds=60.0, kubeconfig=kube.kubeconfig,
        launch_timeout_seconds=42.0, lease_namespace="karpenter", metrics_port=0, health_port=0,
        lease_duration_seconds=LEASE,
    )
    service = assemble_service(settings)
    try:
        assert service.options.upkeep.launch_timeout == 42.0 and service.options.upkeep.registration_timeout == 900.0
        assert seen[0].resource_group == arm.endpoint.resource_group
        service.start()
        _wait(lambda: service.is_leader and service.controller is not None)
        with urllib.request.urlopen(service.endpoints[0].url.replace("0.0.0.0", "127.0.0.1") + "/readyz",
                                    timeout=5) as answer:
            assert answer.status == 200
    finally:
        service.stop(grace=1.0)
    assert _holder(kube) == ""  # released on the way out


def test_hygint_graceful_stop_finishes_the_launch_in_flight_then_hands_over(
        world: tuple[KubeEmulator, ArmEmulator, Callable[..., Service]]) -> None:
    kube, arm, make = world
    arm.set_timings(Timings(vm_create_s=1.0, vm_delete_s=0.02, nic_s=0.01))
    a = make("replica-a")
    _wait(lambda: a.is_leader and a.controller is not None)
    b = make("replica-b")
    founding.set_replicas(kube, 1)
    _wait(lambda: a.controller is not None and a.controller.launcher.in_flight(), 10)
    assert a.controller is not None
    [claim] = a.controller.launcher.in_flight()
    a.stop(grace=5.0)  # SIGTERM
    status = (kube.get("nodeclaims", claim) or {}).get("status") or {}
    launched = next(c for c in status.get("conditions", []) if c["type"] == "Launched")
    assert launched["status"] == "True" and status["providerID"].endswith(f"/aks-{claim}")
    assert _wait(lambda: b.is_leader, LEASE) < LEASE  # released, not expired
    _wait(lambda: b.controller is not None and claim in b.controller.provisioner.records, 5)  # resumed
    creates = [r for r in arm.request_log if r.op == "create_vm" and r.method == "PUT"]
    assert len(creates) == 1 and len(arm.vms) == 1  # b resumed the claim, created nothing
