"""Putting the controller together over the real adapters: the composition root.

``connect_cluster`` opens the Kubernetes connection and starts the informers the
controller reads (pods, nodes, NodeClaims, NodePools, AKSNodeClasses, DaemonSets);
``build`` puts a controller together from its pieces. ``karp-provisioner run`` goes through
``service.assemble_service`` (one replica: leader election, upkeep, probes and metrics around
the controller built here); scenarios and tests call ``build`` with their own pieces.
"""

from __future__ import annotations

from collections.abc import Callable

from provisioner.controller.kubeport import KubeClusterPort
from provisioner.controller.manager import Controller, ControllerOptions
from provisioner.controller.planning import solver_planner
from provisioner.kube.cluster import KubeCluster
from provisioner.kube.connection import AKSNODECLASSES, NODECLAIMS, NODEPOOLS, NODES, PODS, Resource
from provisioner.kube.informer import Informer
from provisioner.kube.leader import LeaderGate
from provisioner.model.catalog import load_catalog
from provisioner.model.errors import InputError
from provisioner.model.instance_type import InstanceType
from provisioner.model.ports import Compute
from provisioner.observability.logwriter import LogWriter

__all__ = ["DAEMONSETS", "build", "connect_cluster"]

DAEMONSETS = Resource("apps", "v1", "daemonsets", "DaemonSet", True)
WATCHED = (PODS, NODES, NODECLAIMS, NODEPOOLS, AKSNODECLASSES, DAEMONSETS)


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
