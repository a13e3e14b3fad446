"""One provisioner replica as a service: leader election, the controller's terms, probes, metrics.

``Service`` puts the pieces together over a Kubernetes connection and a ``Compute``:

- a ``KubeCluster`` whose writes pass a ``LeaderGate``, and informers on it;
- ``GatedCompute`` over the given ``Compute`` (the same gate: no create or delete while
  not leading);
- a ``LeaderElector`` on the Lease and a ``Replica`` that builds a fresh controller and
  upkeep (``provisioner.controller.upkeep``) for each term of leadership;
- optional HTTP ``Endpoints``: ``/metrics``, ``/healthz`` and ``/readyz``, and a pump that
  samples the gauges every two seconds.

``karp-provisioner run`` builds one with ``assemble_service(settings)``; the chaos scenario
builds several against the emulators with ``Service.connect``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from provisioner.controller.assembly import build, connect_cluster
from provisioner.controller.fleet import KubeFleet
from provisioner.controller.ha import ControllerTerm, GatedCompute, Replica
from provisioner.controller.kubeport import KubeClusterPort
from provisioner.controller.manager import Controller, ControllerOptions
from provisioner.controller.upkeep import Upkeep, UpkeepOptions
from provisioner.kube.cluster import KubeCluster
from provisioner.kube.informer import Informer
from provisioner.kube.leader import LeaderElector, LeaderGate
from provisioner.model.instance_type import InstanceType
from provisioner.model.ports import Compute
from provisioner.observability.health import Endpoints
from provisioner.observability.logwriter import LogWriter
from provisioner.observability.metrics import Metrics, Sample, claim_state
from provisioner.settings import Settings

__all__ = ["Service", "ServiceOptions", "assemble_service"]


@dataclass(frozen=True, slots=True)
class ServiceOptions:
    upkeep: UpkeepOptions
    leader_elect: bool = True
    lease_name: str = "karp-leader-election"
    lease_namespace: str = field(default_factory=lambda: os.environ.get("POD_NAMESPACE") or "karpenter")
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    identity: str = field(default_factory=lambda: os.environ.get("POD_NAME") or socket.gethostname())
    bind: str = "0.0.0.0"  # probes and scrapes come from the kubelet and Prometheus
    metrics_port: int | None = 8080  # None: no metrics server
    health_port: int | None = 8081  # None: no probe server; equal to metrics_port: one server
    shutdown_grace: float = 30.0
    sample_every: float = 2.0


class Service:
    def __init__(
        self,
        kube: KubeCluster,
        informers: dict[str, Informer],
        compute: Compute,
        controller_options: ControllerOptions,
        region: str,
        log: LogWriter,
        options: ServiceOptions,
        catalog: tuple[InstanceType, ...] | None = None,
    ) -> None:
        self.kube = kube
        self.informers = informers
        self.port = KubeClusterPort(kube, informers)
        self.gate = kube.gate or LeaderGate()
        self.compute = GatedCompute(compute, lambda: self.gate.is_leader) if kube.gate is not None else compute
        self.controller_options = controller_options
        self.region = region
        self.log = log
        self.options = options
        self.catalog = catalog
        self.controller: Controller | None = None
        self.upkeep: Upkeep | None = None
        self.metrics = Metrics()
        log.subscribe(self.metrics.observe)
        self.elector: LeaderElector | None = None
        self.replica: Replica | None = None
        self.endpoints: list[Endpoints] = []
        self._pump_stop = threading.Event()
        self._pump: threading.Thread | None = None
        self._standalone = False
        self._closed = False
        self.closers: list[Callable[[], object]] = []  # run last on stop (the compute, the log file)

    @classmethod
    def connect(cls, kubeconfig: str | None, context: str | None, compute: Compute, controller_options: ControllerOptions,
                region: str, log: LogWriter, options: ServiceOptions, catalog: tuple[InstanceType, ...] | None = None,
                sync_timeout: float = 30.0) -> Service:
        """Open the connection (gated when electing a leader), start the informers and wait for their lists."""
        gate = LeaderGate() if options.leader_elect else None
        kube, informers, _ = connect_cluster(kubeconfig, context, sync_timeout, gate)
        return cls(kube, informers, compute, controller_options, region, log, options, catalog)

    # --- terms ---------------------------------------------------------------------------
    def make_term(self) -> ControllerTerm:
        controller = build(self.controller_options, self.port, self.compute, self.region, self.log, self.catalog)
        upkeep = Upkeep(self.options.upkeep, KubeFleet(self.kube, self.informers), self.compute, controller.provisioner,
                        self.log, clock=controller.clock)
        self.controller, self.upkeep = controller, upkeep
        return ControllerTerm(controller, upkeep)

    @property
    def is_leader(self) -> bool:
        return self._standalone or self.gate.is_leader

    # --- lifecycle -----------------------------------------------------------------------
    def start(self) -> Service:
        o = self.options
        if o.leader_elect:
            self.elector = LeaderElector(self.kube.raw, name=o.lease_name, namespace=o.lease_namespace,
                                         identity=o.identity, lease_duration=o.lease_duration,
                                         renew_deadline=o.renew_deadline, retry_period=o.retry_period, gate=self.gate)
            self.replica = Replica(self.elector, self.make_term, self.log, grace=o.shutdown_grace).start()
        else:
            self._standalone = True
            self.make_term().start()
        self._start_endpoints()
        self._pump = threading.Thread(target=self._pump_loop, name="karp-metrics", daemon=True)
        self._pump.start()
        return self

    def stop(self, grace: float | None = None) -> None:
        """Graceful shutdown: finish in-flight launches, release the Lease, close everything."""
        grace = self.options.shutdown_grace if grace is None else grace
        self.log.log("process.stopping", identity=self.options.identity)
        if self.replica is not None:
            self.replica.stop(grace)
        elif self.controller is not None:
            if self.upkeep is not None:
                self.upkeep.stop(grace)
            self.controller.stop()
        self._close()

    def kill(self) -> None:
        """Stop as a crash would: no release of the Lease, no waiting for launches (tests and chaos)."""
        if self.elector is not None:
            self.elector.on_stopped_leading = None
            self.elector.stop(release=False, timeout=2.0)
        self.gate.revoke()
        self._standalone = False
        if self.upkeep is not None:
            self.upkeep.stop(timeout=0.5)
        if self.controller is not None:
            threading.Thread(target=self.controller.stop, name="karp-killed", daemon=True).start()
        self._close()

    def _close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._pump_stop.set()
        for endpoints in self.endpoints:
            endpoints.stop()
        for informer in self.informers.values():
            informer.stop()
        with contextlib.suppress(Exception):  # closing is best effort
            self.kube.close()
        for close in self.closers:
            with contextlib.suppress(Exception):
                close()

    # --- probes and metrics ----------------------------------------------------------------
    def healthy(self) -> bool:
        """Live while the election (or the standalone term) and, when leading, upkeep keep turning."""
        if self.elector is not None and self.elector._thread is not None and not self.elector._thread.is_alive():
            return False
        upkeep = self.upkeep
        if self.is_leader and upkeep is not None and upkeep.last_tick:
            limit = max(60.0, 10 * self.options.upkeep.tick)
            return time.monotonic() - upkeep.last_tick < limit
        return True

    def ready(self) -> bool:
        return all(i.synced for i in self.informers.values())

    def _start_endpoints(self) -> None:
        o = self.options
        checks: dict[str, Callable[[], bool]] = {"controller": self.healthy}
        readies: dict[str, Callable[[], bool]] = {"informers": self.ready}
        if o.metrics_port is not None and o.metrics_port == o.health_port:
            self.endpoints.append(Endpoints(o.bind, o.metrics_port, health=checks, ready=readies,
                                            metrics=self.metrics).start())
            return
        if o.metrics_port is not None:
            self.endpoints.append(Endpoints(o.bind, o.metrics_port, metrics=self.metrics).start())
        if o.health_port is not None:
            self.endpoints.append(Endpoints(o.bind, o.health_port, health=checks, ready=readies).start())

    def sample(self) -> Sample:
        states: dict[str, int] = {}
        for obj in self.informers["nodeclaims"].objects() if "nodeclaims" in self.informers else []:
            conditions = {str(c.get("type")): str(c.get("status")) for c in (obj.get("status") or {}).get("conditions") or []}
            state = claim_state(conditions, bool((obj.get("metadata") or {}).get("deletionTimestamp")))
            states[state] = states.get(state, 0) + 1
        controller = self.controller if self.is_leader else None
        stats: Any = controller.provisioner.stats if controller is not None else None
        return Sample(
            pods_pending=len(self.port.pending_keys()), claims=states,
            quota=controller.quota.view() if controller is not None else None, leader=self.is_leader,
            passes=stats.passes if stats is not None else 0,
            last_pass_seconds=stats.last_duration if stats is not None else 0.0,
        )

    def _pump_loop(self) -> None:
        while not self._pump_stop.wait(self.options.sample_every):
            with contextlib.suppress(Exception):  # a sample is best effort; the next one follows
                self.metrics.update(self.sample())


def assemble_service(settings: Settings, credential: Any = None) -> Service:
    """``karp-provisioner run``'s replica from ``Settings``.
    ``credential`` (anything with ``get_token``) defaults to DefaultAzureCredential."""
    from provisioner.azure.compute import AzureCompute
    from provisioner.azure.config import AzureConfig

    if settings.client_id:
        os.environ.setdefault("AZURE_CLIENT_ID", settings.client_id)
    endpoint = None if settings.azure_endpoint == "https://management.azure.com" else settings.azure_endpoint
    config = AzureConfig(settings.subscription_id, settings.node_resource_group, settings.location,
                         endpoint=endpoint, ca_cert=settings.azure_ca_file or None, credential=credential,
                         polling_interval=0.0 if endpoint and "127.0.0.1" in endpoint else 5.0)
    import sys

    log = LogWriter(stream=sys.stdout, path=settings.log_file, level=settings.log_level)
    controller_options = ControllerOptions(
        cluster=settings.cluster_name, subnet_id=settings.subnet_id, mode=settings.mode,
        batch_idle=settings.batch_idle_seconds, batch_max=settings.batch_max_seconds,
        quota_refresh=settings.quota_refresh_seconds,
    )
    upkeep = UpkeepOptions(
        cluster=settings.cluster_name,
        launch_timeout=float(settings.launch_timeout_seconds),
        registration_timeout=float(settings.registration_timeout_seconds),
        gc_interval=float(settings.gc_interval_seconds),
        gc_grace=float(settings.gc_grace_seconds),
    )
    lease = float(settings.lease_duration_seconds)
    options = ServiceOptions(
        upkeep=upkeep,
        leader_elect=bool(settings.leader_elect),
        lease_namespace=str(settings.lease_namespace or os.environ.get("POD_NAMESPACE") or "karpenter"),
        lease_duration=lease,
        renew_deadline=lease * 2 / 3,  # 15 s -> 10 s, as client-go's defaults
        retry_period=lease * 2 / 15,  # 15 s -> 2 s
        metrics_port=int(settings.metrics_port),
        health_port=int(settings.health_port),
        shutdown_grace=float(settings.shutdown_grace_seconds),
    )
    compute = AzureCompute(config)
    try:
        service = Service.connect(settings.kubeconfig, settings.kube_context, compute, controller_options,
                                  settings.location, log, options)
    except Exception:
        compute.close()
        log.close()
        raise
    service.closers += [compute.close, log.close]
    return service
