"""Scheduler, kubelet and workload controllers of the emulator, seen through the official client."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kubernetes import client

from sim.kube.emulator import KubeEmulator

INFLATE = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "inflate"},
    "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "inflate"}},
             "template": {"metadata": {"labels": {"app": "inflate"}},
                          "spec": {"terminationGracePeriodSeconds": 0,
                                   "containers": [{"name": "inflate", "image": "mcr.microsoft.com/oss/kubernetes/pause:3.6",
                                                   "resources": {"requests": {"cpu": "1", "memory": "256M"}}}]}}},
}
MESSAGE = ("0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
           "3 No preemption victims found for incoming pod.")


def _scheduled(pod: client.V1Pod) -> client.V1PodCondition | None:
    return next((c for c in pod.status.conditions or [] if c.type == "PodScheduled"), None)


def test_scaling_a_deployment_makes_unschedulable_pods_and_a_node_runs_them(kube: KubeEmulator, api: client.ApiClient, wait_for: Callable[..., Any]) -> None:
    apps, v1 = client.AppsV1Api(api), client.CoreV1Api(api)
    apps.create_namespaced_deployment("default", INFLATE)
    apps.patch_namespaced_deployment_scale("inflate", "default", {"spec": {"replicas": 20}})

    def pods() -> list[client.V1Pod]:
        return v1.list_namespaced_pod("default", label_selector="app=inflate").items

    wait_for(lambda: len(pods()) == 20)
    wait_for(lambda: all(_scheduled(p) is not None for p in pods()))
    listed = pods()
    assert all(re.fullmatch(r"inflate-[b-z2-9]{6,10}-[b-z2-9]{5}", p.metadata.name) for p in listed)
    assert all(p.metadata.owner_references[0].kind == "ReplicaSet" for p in listed)
    running = [p for p in listed if p.spec.node_name]
    pending = [p for p in listed if not p.spec.node_name]
    assert len(running) == 9  # 3 x Standard_D4s_v5: 3860m allocatable each, minus nothing else
    assert all(_scheduled(p).reason == "Unschedulable" and _scheduled(p).message == MESSAGE for p in pending)
    events = v1.list_namespaced_event("default", field_selector="reason=FailedScheduling,source=default-scheduler").items \
        or [e for e in v1.list_namespaced_event("default").items if e.reason == "FailedScheduling"]
    assert events and events[0].source.component == "default-scheduler" and events[0].type == "Warning"
    scale = apps.read_namespaced_deployment_scale("inflate", "default")
    assert scale.spec.replicas == 20

    node = kube.register_vm("aks-general-purpose-abcde", "Standard_D16s_v5", "2",
                            "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-general-purpose-abcde",
                            {"karpenter.sh/nodepool": "general-purpose"},
                            [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}])
    assert node["spec"]["providerID"].startswith("azure:///")
    got = v1.read_node("aks-general-purpose-abcde")
    assert got.metadata.labels["topology.kubernetes.io/zone"] == "westus2-2"
    assert got.metadata.labels["node.kubernetes.io/instance-type"] == "Standard_D16s_v5"
    assert got.metadata.labels["karpenter.sh/nodepool"] == "general-purpose"
    assert got.status.allocatable["cpu"] == "15740m"
    wait_for(lambda: any(c.type == "Ready" and c.status == "True" for c in v1.read_node("aks-general-purpose-abcde").status.conditions))
    # the unregistered taint still repels the pods; removing it (what the controller does) lets them in
    v1.patch_node("aks-general-purpose-abcde", {"spec": {"taints": None}})
    wait_for(lambda: sum(1 for p in pods() if p.status.phase == "Running") == 20, timeout=10)
    placed = [p for p in pods() if p.spec.node_name == "aks-general-purpose-abcde"]
    assert len(placed) == 11
    assert all(p.status.pod_ip and p.status.host_ip and p.status.start_time for p in placed)
    wait_for(lambda: (apps.read_namespaced_deployment("inflate", "default").status.ready_replicas or 0) == 20)

    assert kube.remove_vm(node["spec"]["providerID"])
    wait_for(lambda: kube.get("nodes", "aks-general-purpose-abcde") is None)
    wait_for(lambda: sum(1 for p in pods() if not p.spec.node_name) == 11)  # recreated by the ReplicaSet, Pending again
    apps.patch_namespaced_deployment_scale("inflate", "default", {"spec": {"replicas": 0}})
    wait_for(lambda: not pods())


def test_daemonset_puts_one_pod_on_every_node(kube: KubeEmulator, api: client.ApiClient, wait_for: Callable[..., Any]) -> None:
    apps, v1 = client.AppsV1Api(api), client.CoreV1Api(api)
    apps.create_namespaced_daemon_set("kube-system", {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}},
                              "spec": {"containers": [{"name": "a", "image": "agent", "resources": {"requests": {"cpu": "100m"}}}]}}}})
    wait_for(lambda: len(v1.list_namespaced_pod("kube-system", label_selector="app=agent").items) == 3)
    nodes = {p.spec.node_name for p in v1.list_namespaced_pod("kube-system", label_selector="app=agent").items}
    assert len(nodes) == 3
    wait_for(lambda: (apps.read_namespaced_daemon_set("agent", "kube-system").status.number_ready or 0) == 3)
    apps.delete_namespaced_daemon_set("agent", "kube-system")
    wait_for(lambda: not v1.list_namespaced_pod("kube-system", label_selector="app=agent").items)


def test_node_affinity_and_selector_reasons(kube: KubeEmulator, api: client.ApiClient, wait_for: Callable[..., Any]) -> None:
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_pod("default", {"metadata": {"name": "gpu"}, "spec": {
        "nodeSelector": {"karpenter.azure.com/sku-gpu-count": "1"},
        "containers": [{"name": "c", "image": "x"}]}})
    v1.create_namespaced_pod("default", {"metadata": {"name": "zonal"}, "spec": {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["westus2-3"]},
                                  {"key": "karpenter.azure.com/sku-cpu", "operator": "Gt", "values": ["2"]}]}]}}},
        "containers": [{"name": "c", "image": "x"}]}})
    wait_for(lambda: _scheduled(v1.read_namespaced_pod("gpu", "default")) is not None)
    gpu = _scheduled(v1.read_namespaced_pod("gpu", "default"))
    assert gpu.status == "False" and gpu.message.startswith("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.")
    assert "3 Preemption is not helpful for scheduling" in gpu.message
    wait_for(lambda: v1.read_namespaced_pod("zonal", "default").spec.node_name == "aks-nodepool1-12345678-vmss000002")


def test_arm_vm_hooks_register_and_remove_karpenter_nodes(kube: KubeEmulator, api: client.ApiClient, wait_for: Callable[..., Any]) -> None:
    from provisioner.model.ports import VmInfo

    v1 = client.CoreV1Api(api)
    vm = VmInfo(id="/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-general-purpose-hook1",
                name="aks-general-purpose-hook1", size="Standard_D2s_v5", zone="1", spot=True, provisioning_state="Succeeded",
                tags={"karpenter.sh_nodepool": "general-purpose"})
    kube.vm_created(vm)
    node = v1.read_node("aks-general-purpose-hook1")
    assert node.spec.provider_id == "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-general-purpose-hook1"
    assert node.metadata.labels["karpenter.sh/nodepool"] == "general-purpose"
    assert node.metadata.labels["karpenter.sh/capacity-type"] == "spot"
    assert node.metadata.labels["topology.kubernetes.io/zone"] == "westus2-1"
    assert {t.key for t in node.spec.taints} == {"karpenter.sh/unregistered", "node.kubernetes.io/not-ready"}
    wait_for(lambda: {t.key for t in v1.read_node("aks-general-purpose-hook1").spec.taints or []} == {"karpenter.sh/unregistered"})
    kube.vm_deleted(vm)
    wait_for(lambda: kube.get("nodes", "aks-general-purpose-hook1") is None)


def test_gated_pods_wait_and_namespace_deletion_takes_its_objects(kube: KubeEmulator, api: client.ApiClient,
                                                                   wait_for: Callable[..., Any]) -> None:
    v1 = client.CoreV1Api(api)
    v1.create_namespace({"metadata": {"name": "doomed"}})
    v1.create_namespaced_pod("doomed", {"metadata": {"name": "gated"}, "spec": {
        "schedulingGates": [{"name": "example.com/wait"}], "containers": [{"name": "c", "image": "x"}]}})
    wait_for(lambda: _scheduled(v1.read_namespaced_pod("gated", "doomed")) is not None)
    gated = _scheduled(v1.read_namespaced_pod("gated", "doomed"))
    assert gated.reason == "SchedulingGated" and not v1.read_namespaced_pod("gated", "doomed").spec.node_name
    v1.delete_namespace("doomed")
    wait_for(lambda: not kube.objects("pods", "doomed"))
