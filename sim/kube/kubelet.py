"""What a kubelet writes: the Node object of a VM, and the status of the pods it runs.

A node registers with the capacity and allocatable of its VM size (from the bundled
catalog and the AKS reservation formulas in ``provisioner.model.allocatable``; a
name-derived estimate for sizes the catalog lacks), the labels a real AKS node
carries, the taints it was told to register with, and the
``node.kubernetes.io/not-ready:NoSchedule`` taint that the node lifecycle controller
keeps on a node until it is Ready.
"""

from __future__ import annotations

import re
from typing import Any

from provisioner.model.quantity import format_memory
from sim.kube.store import now_iso

__all__ = ["NOT_READY_TAINT", "UNREACHABLE_TAINT", "node_object", "pod_running_status", "set_condition", "size_resources"]

Obj = dict[str, Any]
NOT_READY_TAINT = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
UNREACHABLE_TAINT = {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}
GIB = 2**30
_MEMORY_PER_CPU = {"D": 4, "E": 8, "F": 2, "B": 4, "M": 28, "L": 8, "N": 7}


def size_resources(size: str, region: str = "westus2", max_pods: int | None = None) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """(capacity, allocatable, extra labels) of a VM size, as quantity strings."""
    try:
        from provisioner.model.allocatable import allocatable, capacity
        from provisioner.model.catalog import load_catalog

        it = load_catalog(region).get(size)
        if it is not None:
            cap, alloc = capacity(it, max_pods), allocatable(it, max_pods)
            labels = it.labels()
            arch = it.arch
            return _quantities(cap.cpu_m, cap.memory, cap.pods, cap.ephemeral_storage), _quantities(
                alloc.cpu_m, alloc.memory, alloc.pods, alloc.ephemeral_storage
            ), {**labels, "kubernetes.io/arch": arch}
    except Exception:
        pass
    match = re.match(r"^Standard_([A-Z]+)(\d+)", size)
    vcpus = int(match.group(2)) if match else 2
    memory = vcpus * _MEMORY_PER_CPU.get(match.group(1)[0] if match else "D", 4) * GIB
    pods = max_pods or 250
    reserved_cpu = 60 + (40 if vcpus >= 2 else 0) + 20 * max(min(vcpus, 4) - 2, 0) + 10 * max(vcpus - 4, 0)
    reserved_mem = min(20 * 2**20 * pods + 50 * 2**20, memory // 4) + 100 * 2**20
    disk = 128 * GIB
    return (
        _quantities(vcpus * 1000, memory, pods, disk),
        _quantities(vcpus * 1000 - reserved_cpu, memory - reserved_mem, pods, disk - disk // 10),
        {"node.kubernetes.io/instance-type": size, "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"},
    )


def _quantities(cpu_m: int, memory: int, pods: int, disk: int) -> dict[str, str]:
    cpu = f"{cpu_m // 1000}" if cpu_m % 1000 == 0 else f"{cpu_m}m"
    return {"cpu": cpu, "memory": f"{memory // 1024}Ki", "pods": str(pods),
            "ephemeral-storage": f"{disk // 1024}Ki" if disk % 1024 == 0 else format_memory(disk)}


def node_object(name: str, size: str, zone: str, provider_id: str, region: str, ip: str,
                labels: dict[str, str] | None = None, taints: list[Obj] | None = None, ready: bool = False,
                kubelet_version: str = "v1.36.1") -> Obj:
    capacity, allocatable, size_labels = size_resources(size, region)
    zone_label = f"{region}-{zone}" if zone else "0"
    node_labels = {
        "beta.kubernetes.io/arch": size_labels.get("kubernetes.io/arch", "amd64"),
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/instance-type": size,
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": size,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": zone_label,
        "failure-domain.beta.kubernetes.io/region": region,
        "failure-domain.beta.kubernetes.io/zone": zone_label,
        "topology.disk.csi.azure.com/zone": zone_label if zone else "",
        **size_labels,
        **(labels or {}),
    }
    if not zone:
        del node_labels["topology.disk.csi.azure.com/zone"]
    node_taints = [dict(t) for t in (taints or [])]
    if not ready:
        node_taints.append(dict(NOT_READY_TAINT))
    status = "True" if ready else "False"
    stamp = now_iso()
    spec: Obj = {"providerID": provider_id}
    if node_taints:
        spec["taints"] = node_taints
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": node_labels, "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": [
                {"type": t, "status": "False", "reason": r, "message": m, "lastHeartbeatTime": stamp, "lastTransitionTime": stamp}
                for t, r, m in (
                    ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                    ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                    ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                )
            ]
            + [{"type": "Ready", "status": status, "reason": "KubeletReady" if ready else "KubeletNotReady",
                "message": "kubelet is posting ready status" if ready else "container runtime network not ready: NetworkReady=false",
                "lastHeartbeatTime": stamp, "lastTransitionTime": stamp}],
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": size_labels.get("kubernetes.io/arch", "amd64"),
                "bootID": "", "machineID": "", "systemUUID": "",
                "containerRuntimeVersion": "containerd://1.7.22-1",
                "kernelVersion": "5.15.0-1073-azure",
                "kubeProxyVersion": kubelet_version,
                "kubeletVersion": kubelet_version,
                "operatingSystem": "linux",
                "osImage": "Ubuntu 22.04.5 LTS",
            },
            "phase": "Running",
        },
    }


def set_node_ready(node: Obj, ready: str, reason: str, message: str) -> None:
    stamp = now_iso()
    for cond in node["status"]["conditions"]:
        if cond["type"] == "Ready":
            if cond["status"] != ready:
                cond["lastTransitionTime"] = stamp
            cond.update(status=ready, reason=reason, message=message, lastHeartbeatTime=stamp)
    taints = [t for t in node["spec"].get("taints") or [] if t.get("key") not in (NOT_READY_TAINT["key"], UNREACHABLE_TAINT["key"])]
    if ready == "False":
        taints.append(dict(NOT_READY_TAINT))
    elif ready == "Unknown":
        taints.append(dict(UNREACHABLE_TAINT))
        taints.append({**UNREACHABLE_TAINT, "effect": "NoExecute", "timeAdded": stamp})
    if taints:
        node["spec"]["taints"] = taints
    else:
        node["spec"].pop("taints", None)


def pod_running_status(pod: Obj, pod_ip: str, host_ip: str) -> None:
    stamp = now_iso()
    status = pod.setdefault("status", {})
    status.update(phase="Running", podIP=pod_ip, podIPs=[{"ip": pod_ip}], hostIP=host_ip, hostIPs=[{"ip": host_ip}], startTime=stamp)
    conditions = {c["type"]: c for c in status.get("conditions") or []}
    for type_ in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"):
        existing = conditions.get(type_)
        if existing is None or existing.get("status") != "True":
            conditions[type_] = {"type": type_, "status": "True", "lastProbeTime": None, "lastTransitionTime": stamp}
    status["conditions"] = list(conditions.values())
    status["containerStatuses"] = [
        {"name": c["name"], "image": c.get("image", ""), "imageID": "", "containerID": f"containerd://{pod['metadata']['uid'].replace('-', '')}",
         "ready": True, "started": True, "restartCount": 0, "state": {"running": {"startedAt": stamp}}}
        for c in (pod.get("spec") or {}).get("containers") or []
    ]


def set_condition(obj: Obj, type_: str, status: str, reason: str = "", message: str = "") -> bool:
    """Set a status condition by type; True if it changed. Keeps lastTransitionTime on no-op."""
    conditions = obj.setdefault("status", {}).setdefault("conditions", [])
    for cond in conditions:
        if cond.get("type") == type_:
            if cond.get("status") == status and cond.get("reason", "") == reason and cond.get("message", "") == message:
                return False
            if cond.get("status") != status:
                cond["lastTransitionTime"] = now_iso()
            cond.update(status=status, reason=reason, message=message)
            if not reason:
                cond.pop("reason")
            if not message:
                cond.pop("message")
            cond.setdefault("lastProbeTime", None)
            return True
    new: Obj = {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": now_iso()}
    if reason:
        new["reason"] = reason
    if message:
        new["message"] = message
    conditions.append(new)
    return True
