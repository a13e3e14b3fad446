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

    def start(self) -> None:
        self.controller.start()

    def stop(self) -> None:
        self.controller.stop()
        for close in reversed(self.closers):
            with contextlib.suppress(Exception):  # closing is best effort
                close()


def connect_cluster(kubeconfig: str | None, context: str | None, sync_timeout: float = 30.0
                    ) -> tuple[KubeCluster, dict[str, Informer], KubeClusterPort]:
    """Connect, start one informer per watched kind and wait for their first lists."""
    kube = KubeCluster.connect(kubeconfig or None, context or None)
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
) -> Controller:
    types = catalog if catalog is not None else load_catalog(region).types
    return Controller(options, port, compute, lambda unavailable: solver_planner(unavailable, region), lambda: types,
                      log, port.event)


def assemble(settings: Settings) -> Running:
    """The controller for ``karp-provisioner run``: Azure from the settings, the cluster from the kubeconfig."""
    if settings.client_id:
        os.environ.setdefault("AZURE_CLIENT_ID", settings.client_id)
    endpoint = None if settings.azure_endpoint == "https://management.azure.com" else settings.azure_endpoint
    config = AzureConfig(settings.subscription_id, settings.node_resource_group, settings.location,
                         endpoint=endpoint, ca_cert=settings.azure_ca_file or None)
    log = LogWriter(stream=_stdout(), path=settings.log_file, level=settings.log_level)
    kube, informers, port = connect_cluster(settings.kubeconfig, settings.kube_context)
    compute = AzureCompute(config)
    options = ControllerOptions(
        cluster=settings.cluster_name, subnet_id=settings.subnet_id, mode=settings.mode,
        batch_idle=settings.batch_idle_seconds, batch_max=settings.batch_max_seconds,
        quota_refresh=settings.quota_refresh_seconds,
    )
    controller = build(options, port, compute, settings.location, log)
    closers: list[Callable[[], None]] = [kube.close, *(i.stop for i in informers.values()), compute.close, log.close]
    return Running(controller, closers)


def _stdout() -> Any:
    import sys

    return sys.stdout
