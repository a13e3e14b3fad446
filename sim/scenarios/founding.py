"""The founding scenario's cluster: what the 2023 walkthrough built, offline.

- region ``westus2``, regional vCPU quota 20 with 14 in use;
- 3 system nodes tainted ``CriticalAddonsOnly=true:NoSchedule`` (as AKS system pools are),
  so the ``inflate`` pods do not fit there;
- 5 DaemonSets whose requests sum to the founding log's overhead: 250m CPU, 481280Ki
  memory, 5 pods;
- NodePool ``general-purpose`` (amd64, linux, on-demand, SKU family D) and the
  ``default`` AKSNodeClass (Ubuntu2204);
- Deployment ``inflate`` (pause image, requests cpu 1 / memory 256M), 0 replicas.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from provisioner.model.ports import VmInfo
from sim.kube import kubelet
from sim.kube.emulator import KubeEmulator

__all__ = ["DAEMONSETS", "REGION", "NodeBridge", "inflate", "nodeclass", "nodepool", "seed_cluster", "set_replicas"]

REGION = "westus2"
Obj = dict[str, Any]

# name -> (cpu, memory): 250m and 481280Ki (470Mi) in total, 5 pods
DAEMONSETS = {
    "kube-proxy": ("100m", "0"),
    "azure-ip-masq-agent": ("50m", "50Mi"),
    "cloud-node-manager": ("50m", "50Mi"),
    "csi-azuredisk-node": ("30m", "180Mi"),
    "csi-azurefile-node": ("20m", "190Mi"),
}
SYSTEM_TAINT = {"key": "CriticalAddonsOnly", "value": "true", "effect": "NoSchedule"}


def daemonset(name: str, cpu: str, memory: str) -> Obj:
    labels = {"k8s-app": name}
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "kube-system", "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{"name": name, "image": f"mcr.microsoft.com/oss/kubernetes/{name}:v1",
                                    "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
                },
            },
        },
    }


def nodepool() -> Obj:
    return {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": "general-purpose"},
        "spec": {
            "template": {
                "metadata": {"labels": {"intent": "apps"}},
                "spec": {
                    "requirements": [
                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                        {"key": "karpenter.azure.com/sku-family", "operator": "In", "values": ["D"]},
                    ],
                    "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
                    "expireAfter": "720h",
                },
            },
            "limits": {"cpu": "100"},
            "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s"},
        },
    }


def nodeclass() -> Obj:
    return {
        "apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass",
        "metadata": {"name": "default"},
        "spec": {"imageFamily": "Ubuntu2204", "osDiskSizeGB": 128},
    }


def inflate() -> Obj:
    labels = {"app": "inflate"}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "inflate", "namespace": "default"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "inflate", "image": "mcr.microsoft.com/oss/kubernetes/pause:3.6",
                                    "resources": {"requests": {"cpu": "1", "memory": "256M"}}}],
                },
            },
        },
    }


def seed_cluster(kube: KubeEmulator, pool: Obj | None = None) -> None:
    """Create the system nodes, DaemonSets, NodePool, AKSNodeClass and the inflate Deployment."""
    for index in range(3):
        name = f"aks-nodepool1-38349105-vmss{index:06x}"
        provider_id = (f"azure:///subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/"
                       f"mc_karpenter_karpenter_{REGION}/providers/Microsoft.Compute/virtualMachineScaleSets/"
                       f"aks-nodepool1-38349105-vmss/virtualMachines/{index}")
        labels = {"kubernetes.azure.com/agentpool": "nodepool1", "kubernetes.azure.com/mode": "system",
                  "agentpool": "nodepool1"}
        node = kubelet.node_object(name, "Standard_DS2_v2", str(index % 3 + 1), provider_id, REGION,
                                   f"10.224.0.{4 + index}", labels, [dict(SYSTEM_TAINT)], ready=True)
        kube.create("nodes", node)
    for name, (cpu, memory) in DAEMONSETS.items():
        kube.create("daemonsets", daemonset(name, cpu, memory), namespace="kube-system")
    kube.create("aksnodeclasses", nodeclass())
    kube.create("nodepools", pool if pool is not None else nodepool())
    kube.create("deployments", inflate(), namespace="default")


def set_replicas(kube: KubeEmulator, replicas: int, name: str = "inflate", namespace: str = "default") -> None:
    def change(obj: Obj) -> None:
        obj["spec"]["replicas"] = replicas

    kube.store.mutate(kube.kind("deployments"), namespace, name, change)


class NodeBridge:
    """Plays the VMs' kubelets: a Succeeded VM registers its Node (tainted ``karpenter.sh/unregistered``),
    which the emulator turns Ready after its delay; a deleted VM's Node goes away.

    It is the ARM emulator's VM hooks, and idempotent: a VM is registered exactly once.
    """

    def __init__(self, kube: KubeEmulator) -> None:
        self.kube = kube
        self._registered: set[str] = set()
        self._lock = threading.Lock()

    def created(self, vm: VmInfo) -> None:
        try:
            self._register(vm)
        except Exception as e:  # a hook must not stop the ARM emulator's other hooks
            print(f"karp-sim: registering node for {vm.name} failed: {type(e).__name__}: {e}", file=sys.stderr)

    def deleted(self, vm: VmInfo) -> None:
        with self._lock:
            self._registered.discard(vm.provider_id.lower())
        self.kube.remove_vm(vm.provider_id)

    def _register(self, vm: VmInfo) -> None:
        key = vm.provider_id.lower()
        with self._lock:
            if key in self._registered:
                return
            self._registered.add(key)
        kube = self.kube
        labels = {}
        pool = vm.tags.get("karpenter.sh_nodepool")
        if pool:
            labels["karpenter.sh/nodepool"] = pool
        kube.register_vm(vm.name, vm.size, vm.zone, vm.provider_id, labels,
                         [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}])
