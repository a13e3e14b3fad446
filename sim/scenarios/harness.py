"""A whole system in one process: Kubernetes emulator, ARM emulator, kubelets, and the provisioner.

``Stage`` starts the two emulators (each served over real HTTP), plays the VMs' kubelets
(``founding.NodeBridge``), connects the provisioner to the Kubernetes emulator through the
official client and informers and to the ARM emulator through the Azure SDK, and runs the
controller. Scenarios, integration tests and the benchmark drive it::

    with Stage(mode="quota-aware", quotas={"cores": 20}, usages={"cores": 14}) as stage:
        stage.scale(10)
        stage.wait_for(lambda: stage.counts()[0] >= 4, timeout=10)
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from provisioner.azure.credentials import StaticCredential
from provisioner.controller.assembly import build, connect_cluster
from provisioner.controller.kubeport import is_provisionable
from provisioner.controller.manager import Controller, ControllerOptions
from provisioner.model.catalog import load_catalog
from provisioner.observability.logwriter import LogWriter
from sim.arm.emulator import ArmEmulator
from sim.arm.faults import FaultRule
from sim.arm.state import Timings
from sim.kube.emulator import KubeEmulator
from sim.scenarios import founding

__all__ = ["Stage", "StageTimings"]

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class StageTimings:
    vm_create: float = 0.3
    node_ready: float = 0.3
    batch_idle: float = 1.0
    batch_max: float = 10.0
    requeue: float = 3.0
    quota_refresh: float = 60.0
    failed_linger: float = 2.0
    tick: float = 0.1


class Stage:
    def __init__(
        self,
        mode: str = "quota-aware",
        *,
        quotas: dict[str, int] | None = None,
        usages: dict[str, int] | None = None,
        faults: list[FaultRule] | None = None,
        nodepool: Obj | None = None,
        log_path: str = "",
        log_stream: Any = None,
        timings: StageTimings = StageTimings(),
        on_record: Callable[[dict[str, Any]], None] | None = None,
        provisioner: bool = True,
    ) -> None:
        self.with_provisioner = provisioner
        self.mode = mode
        self.timings = timings
        self.kube = KubeEmulator(region=founding.REGION, node_ready_delay=timings.node_ready, tick=0.05)
        founding.seed_cluster(self.kube, nodepool)
        self.bridge = founding.NodeBridge(self.kube)
        self.arm = ArmEmulator(founding.REGION, quotas=quotas, usages=usages, faults=faults,
                               vm_created_hook=self.bridge.created, vm_deleted_hook=self.bridge.deleted,
                               timings=Timings(vm_create_s=timings.vm_create, vm_delete_s=0.05, nic_s=0.02))
        self.log = LogWriter(stream=log_stream, path=log_path, level="DEBUG")
        self.records: list[dict[str, Any]] = []
        self.log.subscribe(self.records.append)
        if on_record is not None:
            self.log.subscribe(on_record)
        self._stop = threading.Event()
        self.controller: Controller | None = None
        self._closers: list[Callable[[], object]] = []

    # --- lifecycle ---------------------------------------------------------------------
    def start(self) -> Stage:
        from provisioner.azure.compute import AzureCompute
        from provisioner.azure.config import AzureConfig

        self.kube.start()
        self._closers.append(self.kube.stop)
        endpoint = self.arm.start()
        self._closers.append(self.arm.stop)
        if not self.with_provisioner:
            return self
        compute = AzureCompute(AzureConfig.for_emulator(endpoint.as_dict(), StaticCredential("karp-sim"), max_retries=0))
        self._closers.append(compute.close)
        client, informers, port = connect_cluster(self.kube.kubeconfig, None)
        self._closers.append(client.close)
        self._closers.extend(i.stop for i in informers.values())
        self._closers.append(lambda: client.recorder.flush(5.0))
        t = self.timings
        options = ControllerOptions(cluster="karpenter", subnet_id=endpoint.subnet_id, mode=self.mode,
                                    batch_idle=t.batch_idle, batch_max=t.batch_max, quota_refresh=t.quota_refresh,
                                    requeue=t.requeue, tick=t.tick, failed_linger=t.failed_linger)
        self.controller = build(options, port, compute, founding.REGION, self.log, load_catalog(founding.REGION).types)
        self.controller.start()
        return self

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
        self._stop.set()
        for close in reversed(self._closers):
            with contextlib.suppress(Exception):  # best effort
                close()
        self._closers = []
        self.log.close()

    def __enter__(self) -> Stage:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()

    # --- driving and looking ------------------------------------------------------------
    def scale(self, replicas: int) -> None:
        founding.set_replicas(self.kube, replicas)

    def counts(self) -> tuple[int, int]:
        """(running, not running) ``inflate`` pods."""
        running = pending = 0
        for pod in self.kube.objects("pods", "default"):
            if not pod["metadata"]["name"].startswith("inflate-") or pod["metadata"].get("deletionTimestamp"):
                continue
            if (pod.get("status") or {}).get("phase") == "Running":
                running += 1
            else:
                pending += 1
        return running, pending

    def provisionable(self) -> int:
        return sum(1 for p in self.kube.objects("pods", "default") if is_provisionable(p))

    def events(self, kind: str = "", reason: str = "") -> list[Obj]:
        out = []
        for ns in ("default", "kube-system"):
            for e in self.kube.objects("events", ns):
                if kind and (e.get("involvedObject") or {}).get("kind") != kind:
                    continue
                if reason and e.get("reason") != reason:
                    continue
                out.append(e)
        return out

    def logged(self, event: str) -> list[dict[str, Any]]:
        return [r for r in list(self.records) if r.get("event") == event]

    def wait_for(self, condition: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            self._stop.wait(0.05)
        return condition()

    def settle(self, minimum: float, maximum: float, quiet: float) -> None:
        """Wait until pods, nodes and claims stop changing for ``quiet`` seconds (bounded)."""
        start = time.monotonic()
        last: tuple[Any, ...] = ()
        since = start
        assert self.controller is not None
        while True:
            now = time.monotonic()
            state = (self.counts(), len(self.kube.objects("nodes")), len(self.kube.objects("nodeclaims")),
                     len(self.controller.launcher.in_flight()), self.provisionable())
            if state != last:
                last, since = state, now
            if now - start >= maximum or (now - start >= minimum and now - since >= quiet):
                return
            self._stop.wait(0.1)
