"""``KubeEmulator``: a Kubernetes API server, scheduler and kubelet in one process.

Serves real HTTP on 127.0.0.1 (port 0 by default) so the official client, kubectl and
our own code talk to it as to a cluster; writes a kubeconfig for them; and exposes
its state to tests (``store``, ``objects()``), a fault switchboard (``faults``) and
the hooks the ARM emulator calls when VMs come and go (``register_vm``,
``remove_vm``).

    with KubeEmulator(nodes=3) as kube:
        client = kubernetes.config.new_client_from_config(kube.kubeconfig)
"""

from __future__ import annotations

import contextlib
import itertools
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from provisioner.model.ports import VmInfo
from sim.kube import kubelet
from sim.kube.apiserver import ApiServer
from sim.kube.controllers import Controllers
from sim.kube.faults import Faults
from sim.kube.kinds import Kind
from sim.kube.store import ApiError, Store
from sim.kube.transport import ApiHttpServer

__all__ = ["DEFAULT_CRD_DIR", "SYSTEM_NAMESPACES", "KubeEmulator"]

Obj = dict[str, Any]
DEFAULT_CRD_DIR = Path(__file__).resolve().parents[2] / "deploy" / "crds"
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease", "karpenter")
SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"


class KubeEmulator:
    def __init__(
        self,
        *,
        port: int = 0,
        nodes: int = 0,
        node_size: str = "Standard_D4s_v5",
        region: str = "westus2",
        crds: Iterable[str | Path] | None = None,
        namespaces: Iterable[str] = SYSTEM_NAMESPACES,
        node_ready_delay: float = 0.5,
        node_gone_delay: float = 0.5,
        scheduler: bool = True,
        kubelet_enabled: bool = True,
        workloads: bool = True,
        history: int = 50_000,
        bookmark_interval: float = 1.0,
        tick: float = 0.25,
        kubeconfig_path: str | Path | None = None,
        seed: int = 0,
    ) -> None:
        self.region = region
        self.node_ready_delay = node_ready_delay
        self.node_gone_delay = node_gone_delay
        self.store = Store(history=history, seed=seed)
        self.api = ApiServer(self.store, bookmark_interval=bookmark_interval)
        self.faults = Faults()
        self.controllers = Controllers(self.api, scheduler_enabled=scheduler, kubelet_enabled=kubelet_enabled,
                                       workloads_enabled=workloads, tick=tick)
        self._port = port
        self._server: ApiHttpServer | None = None
        self._thread: threading.Thread | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._kubeconfig_path = Path(kubeconfig_path) if kubeconfig_path else None
        self._node_ips = itertools.count(4)
        for ns in namespaces:
            self.create("namespaces", {"metadata": {"name": ns}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
        crd_paths = [DEFAULT_CRD_DIR] if crds is None else list(crds)
        for path in crd_paths:
            if Path(path).exists():
                self.load_crds(path)
        for index in range(nodes):
            self.add_system_node(index, node_size)

    # ---- lifecycle --------------------------------------------------------------------------
    def start(self) -> KubeEmulator:
        self._server = ApiHttpServer(self.api, self.faults, port=self._port)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="kube-emulator-http", daemon=True)
        self._thread.start()
        self.controllers.start()
        self._write_kubeconfig()
        return self

    def stop(self) -> None:
        self.controllers.stop()
        if self._server is not None:
            self._server.closing.set()
            with self.store.lock:
                self.store.changed.notify_all()
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> KubeEmulator:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the emulator is not started")
        return self._server.port

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def kubeconfig(self) -> str:
        if self._kubeconfig_path is None:
            raise RuntimeError("the emulator is not started")
        return str(self._kubeconfig_path)

    def _write_kubeconfig(self) -> None:
        if self._kubeconfig_path is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="karp-sim-kube-")
            self._kubeconfig_path = Path(self._tmp.name) / "kubeconfig"
        config = {
            "apiVersion": "v1", "kind": "Config", "preferences": {},
            "clusters": [{"name": "karp-sim", "cluster": {"server": self.endpoint}}],
            "users": [{"name": "karp-sim", "user": {"token": "karp-sim"}}],
            "contexts": [{"name": "karp-sim", "context": {"cluster": "karp-sim", "user": "karp-sim", "namespace": "default"}}],
            "current-context": "karp-sim",
        }
        self._kubeconfig_path.parent.mkdir(parents=True, exist_ok=True)
        self._kubeconfig_path.write_text(yaml.safe_dump(config, sort_keys=False))

    # ---- state access -----------------------------------------------------------------------
    def kind(self, plural: str) -> Kind:
        return self.api.find_kind(plural)

    def create(self, plural: str, body: Obj, namespace: str = "") -> Obj:
        kind = self.kind(plural)
        ns = namespace or (body.get("metadata") or {}).get("namespace", "") if kind.namespaced else ""
        if kind.key == "/pods":
            return self.api.create_pod(ns or "default", body)
        obj = self.store.create(kind, ns or ("default" if kind.namespaced else ""), body)
        if kind.plural == "customresourcedefinitions":
            self.api.register_crd(obj)
        return obj

    def objects(self, plural: str, namespace: str = "") -> list[Obj]:
        items, _ = self.store.select(self.kind(plural), namespace)
        return sorted(items, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))

    def get(self, plural: str, name: str, namespace: str = "") -> Obj | None:
        return self.store.find(self.kind(plural), namespace, name)

    def load_crds(self, path: str | Path) -> list[str]:
        """Create every CustomResourceDefinition in a YAML file or directory; returns their names."""
        files = sorted(Path(path).glob("*.yaml")) if Path(path).is_dir() else [Path(path)]
        names = []
        for file in files:
            for doc in yaml.safe_load_all(file.read_text()):
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    if self.get("customresourcedefinitions", doc["metadata"]["name"]) is None:
                        self.api.handle_create_crd(doc)
                    names.append(doc["metadata"]["name"])
        return names

    def set_pod_log(self, namespace: str, pod: str, container: str, text: str, previous: bool = False) -> None:
        """What ``GET pods/<pod>/log?container=<container>[&previous=true]`` answers."""
        self.api.pod_logs[(namespace, pod, container, previous)] = text

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until the control loops have caught up with every change (True) or time out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.controllers.idle.wait(timeout=max(0.0, deadline - time.monotonic())):
                return True
        return False

    # ---- faults ---------------------------------------------------------------------------------
    @property
    def open_watches(self) -> int:
        """Watch streams being served right now."""
        return self._server.open_watches if self._server is not None else 0

    def drop_watches(self) -> None:
        self.faults.drop_watches()
        with self.store.lock:
            self.store.changed.notify_all()

    def compact(self) -> None:
        """Forget watch history: every watch from an older version now gets 410."""
        self.store.compact()

    # ---- nodes ----------------------------------------------------------------------------------
    def add_system_node(self, index: int, size: str = "Standard_D4s_v5") -> Obj:
        name = f"aks-nodepool1-12345678-vmss{index:06x}"
        provider_id = (f"azure:///subscriptions/{SUBSCRIPTION}/resourceGroups/mc_karp_karp_{self.region}/providers/"
                       f"Microsoft.Compute/virtualMachineScaleSets/aks-nodepool1-12345678-vmss/virtualMachines/{index}")
        labels = {"kubernetes.azure.com/agentpool": "nodepool1", "kubernetes.azure.com/mode": "system",
                  "kubernetes.azure.com/role": "agent", "agentpool": "nodepool1"}
        node = kubelet.node_object(name, size, str(index % 3 + 1), provider_id, self.region, self._next_ip(), labels, ready=True)
        return self.create("nodes", node)

    def _next_ip(self) -> str:
        n = next(self._node_ips)
        return f"10.224.{n // 250}.{n % 250 + 4}"

    def register_vm(self, name: str, size: str, zone: str, provider_id: str, labels: dict[str, str] | None = None,
                    taints: list[Obj] | None = None) -> Obj:
        """A VM's kubelet registers its Node (NotReady), which turns Ready after ``node_ready_delay``."""
        existing = next((n for n in self.objects("nodes") if (n.get("spec") or {}).get("providerID") == provider_id), None)
        if existing is not None:
            return existing
        node = self.create("nodes", kubelet.node_object(name, size, zone, provider_id, self.region, self._next_ip(), labels, taints))
        nodes = self.kind("nodes")

        def ready() -> None:
            self.store.mutate(nodes, "", name, lambda o: kubelet.set_node_ready(o, "True", "KubeletReady", "kubelet is posting ready status"), "*")

        self.controllers.after(self.node_ready_delay, ready)
        return node

    def vm_created(self, vm: VmInfo) -> Obj:
        """``vm_created_hook`` for the ARM emulator: the VM's kubelet registers its Node.

        A VM tagged with a NodePool (``karpenter.sh_nodepool``, Azure's spelling of
        ``karpenter.sh/nodepool``) registers with that label, its capacity type and the
        ``karpenter.sh/unregistered:NoExecute`` taint, as Karpenter's bootstrap asks."""
        pool = vm.tags.get("karpenter.sh_nodepool") or vm.tags.get("karpenter.sh/nodepool") or ""
        labels: dict[str, str] = {}
        taints: list[Obj] = []
        if pool:
            labels = {"karpenter.sh/nodepool": pool, "karpenter.sh/capacity-type": "spot" if vm.spot else "on-demand"}
            taints = [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]
        return self.register_vm(vm.name, vm.size, vm.zone, vm.provider_id, labels, taints)

    def vm_deleted(self, vm: VmInfo) -> None:
        """``vm_deleted_hook`` for the ARM emulator."""
        self.remove_vm(vm.provider_id)

    def remove_vm(self, provider_id: str) -> bool:
        """The VM is gone: its node goes NotReady (Unknown) and is deleted after ``node_gone_delay``."""
        nodes = self.kind("nodes")
        node = next((n for n in self.objects("nodes") if (n.get("spec") or {}).get("providerID") == provider_id), None)
        if node is None:
            return False
        name = node["metadata"]["name"]
        self.store.mutate(nodes, "", name, lambda o: kubelet.set_node_ready(o, "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."), "*")

        def gone() -> None:
            with contextlib.suppress(ApiError):
                self.store.delete(nodes, "", name)

        self.controllers.after(self.node_gone_delay, gone)
        return True
