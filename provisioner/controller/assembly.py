"""Putting the controller together over the real adapters: the composition root.

``connect_cluster`` opens the Kubernetes connection and starts the informers the
controller reads (pods, nodes, NodeClaims, NodePools, AKSNodeClasses, DaemonSets);
``assemble`` builds the whole controller from ``Settings``; ``Running`` starts and stops
it with its connections. Scenarios and tests call ``build`` with their own pieces.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from provisioner.azure.compute import AzureCompute
from provisioner.azure.config import AzureConfig
from provisioner.controller.kubeport import KubeClusterPort
from provisioner.controller.manager import Controller, ControllerOptions
from provisioner.controller.planning import solver_planner
from provisioner.kube.cluster import KubeCluster
from provisioner.kube.connection import AKSNODECLASSES, NODECLAIMS, NODEPOOLS, NODES, PODS, Resource
from provisioner.kube.informer import Informer
from provisioner.kube.leader import LeaderElector, LeaderGate
from provisioner.model.catalog import load_catalog
from provisioner.model.errors import InputError
from provisioner.model.instance_type import InstanceType
from provisioner.model.ports import Compute
from provisioner.observability.logwriter import LogWriter
from provisioner.settings import Settings

__all__ = ["DAEMONSETS", "Running", "assemble", "build", "connect_cluster"]

DAEMONSETS = Resource("apps", "v1", "daemonsets", "DaemonSet", True)
WATCHED = (PODS, NODES, NODECLAIMS, NODEPOOLS, AKSNODECLASSES, DAEMONSETS)


@dataclass
class Running:
    controller: Controller
    closers: list[Callable[[], None]] = field(default_factory=list)
    elector: LeaderElector | None = None
    stopping: bool = False

    def start(self) -> None:
        if self.elector is not None:
            self.elector.start()
        self.controller.start()

    def stop(self) -> None:
        self.stopping = True
        self.controller.stop()
        if self.elector is not None:
            self.elector.stop(release=True)
        for close in reversed(self.closers):
            with contextlib.suppress(Exception):  # closing is best effort
                close()


def connect_cluster(kubeconfig: str | None, context: str | None, sync_timeout: float = 30.0,
                    gate: LeaderGate | None = None) -> tuple[KubeCluster, dict[str, Informer], KubeClusterPort]:
    """Connect, start one informer per watched kind and wait for their first lists."""
    kube = KubeCluster.connect(kubeconfig or None, context or None, gate=gate)
    informers = {r.plural: kube.informer(r).start() for r in WATCHED}
    for plural, informer in informers.items():
        if not informer.wait_synced(sync_timeout):
            for i in informers.values():
                i.stop()
            kube.close()
            error = informer.last_error
            raise InputError(f"cluster: could not list {plural} within {sync_timeout:.0f} s"
                             + (f" ({error})" if error else ""))
    return kube, informers, KubeClusterPort(kube, informers)


def build(
    options: ControllerOptions,
    port: KubeClusterPort,
    compute: Compute,
    region: str,
    log: LogWriter,
    catalog: tuple[InstanceType, ...] | None = None,
    is_leader: Callable[[], bool] | None = None,
) -> Controller:
    types = catalog if catalog is not None else load_catalog(region).types
    return Controller(options, port, compute, lambda unavailable: solver_planner(unavailable, region), lambda: types,
                      log, port.event, is_leader=is_leader)


def assemble(settings: Settings, credential: Any = None) -> Running:
    """The controller for ``karp-provisioner run``: Azure from the settings, the cluster from the kubeconfig.
    ``credential`` (anything with ``get_token``) defaults to DefaultAzureCredential."""
    if settings.client_id:
        os.environ.setdefault("AZURE_CLIENT_ID", settings.client_id)
    endpoint = None if settings.azure_endpoint == "https://management.azure.com" else settings.azure_endpoint
    config = AzureConfig(settings.subscription_id, settings.node_resource_group, settings.location,
                         endpoint=endpoint, ca_cert=settings.azure_ca_file or None, credential=credential,
                         polling_interval=0.0 if endpoint and "127.0.0.1" in endpoint else 5.0)
    log = LogWriter(stream=_stdout(), path=settings.log_file, level=settings.log_level)
    gate = LeaderGate()
    kube, informers, port = connect_cluster(settings.kubeconfig, settings.kube_context, gate=gate)
    lease = "karpenter/karp-leader-election"

    def acquired() -> None:
        log.log("leader.acquired", lease=lease)

    def lost() -> None:
        if not running.stopping:  # giving the lease back on shutdown is no loss
            log.log("leader.lost", lease=lease)

    elector = LeaderElector(kube.raw, gate=gate, on_started_leading=acquired, on_stopped_leading=lost)
    compute = AzureCompute(config)
    options = ControllerOptions(
        cluster=settings.cluster_name, subnet_id=settings.subnet_id, mode=settings.mode,
        batch_idle=settings.batch_idle_seconds, batch_max=settings.batch_max_seconds,
        quota_refresh=settings.quota_refresh_seconds,
    )
    controller = build(options, port, compute, settings.location, log, is_leader=lambda: gate.is_leader)
    closers: list[Callable[[], None]] = [kube.close, *(i.stop for i in informers.values()), compute.close, log.close]
    running = Running(controller, closers, elector)
    return running


def _stdout() -> Any:
    import sys

    return sys.stdout
