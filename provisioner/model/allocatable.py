"""What an AKS node of a given size leaves for pods: capacity minus AKS's reservations.

The figures follow the AKS documentation "Node resource reservations" (AKS 1.29 and later):

- CPU, kube-reserved by core count: 60m for the first core, 40m for the second, 20m each
  for cores 3-4 and 10m for every core after that. That reproduces the documented table
  (1: 60m, 2: 100m, 4: 140m, 8: 180m, 16: 260m, 32: 420m, 64: 740m).
- Memory, kube-reserved: the lesser of ``20 MiB x maxPods + 50 MiB`` and 25 % of the VM's
  memory; plus the kubelet eviction threshold ``memory.available < 100Mi``.
  (Before 1.29 AKS used a regressive 25/20/10/6/2 % scale and a 750Mi eviction
  threshold; ``legacy_memory_reserved`` keeps that formula for comparison only.)
- Pods: ``maxPods``, 250 unless given (Karpenter's AKS default with Azure CNI Overlay;
  plain Azure CNI clusters use 30: pass ``max_pods=30``).
- Ephemeral storage: the OS disk (128 GiB, the AKSNodeClass ``osDiskSizeGB`` default)
  less the kubelet eviction threshold ``nodefs.available < 10%``.

Azure reports VM memory in GiB while the guest sees slightly less; that difference is not
modelled: allocatable is computed from the catalog's memory figure.
"""

from __future__ import annotations

from provisioner.model.instance_type import InstanceType
from provisioner.model.resources import Resources

__all__ = [
    "DEFAULT_MAX_PODS",
    "EVICTION_MEMORY",
    "OS_DISK_BYTES",
    "allocatable",
    "capacity",
    "kube_reserved_cpu",
    "kube_reserved_memory",
    "legacy_memory_reserved",
    "pods_that_fit",
]

MIB = 2**20
GIB = 2**30
DEFAULT_MAX_PODS = 250
EVICTION_MEMORY = 100 * MIB
OS_DISK_BYTES = 128 * GIB
NODEFS_EVICTION_PERCENT = 10


def kube_reserved_cpu(vcpus: int) -> int:
    """Millicores AKS reserves on a node with ``vcpus`` cores."""
    if vcpus <= 0:
        return 0
    reserved = 60
    if vcpus >= 2:
        reserved += 40
    reserved += 20 * max(min(vcpus, 4) - 2, 0)
    reserved += 10 * max(vcpus - 4, 0)
    return reserved


def kube_reserved_memory(memory_bytes: int, max_pods: int) -> int:
    """Bytes AKS 1.29+ reserves for kubelet and the container runtime (eviction not included)."""
    return min(20 * MIB * max_pods + 50 * MIB, memory_bytes // 4)


def legacy_memory_reserved(memory_bytes: int) -> int:
    """Kube-reserved memory before AKS 1.29 (25 % of the first 4 GiB, 20 % of the next 4,
    10 % of the next 8, 6 % of the next 112, 2 % above 128 GiB). Not used by ``allocatable``."""
    bands = ((4 * GIB, 25), (4 * GIB, 20), (8 * GIB, 10), (112 * GIB, 6))
    left = memory_bytes
    reserved = 0
    for size, percent in bands:
        part = min(left, size)
        reserved += part * percent // 100
        left -= part
    return reserved + max(left, 0) * 2 // 100


def capacity(it: InstanceType, max_pods: int | None = None) -> Resources:
    """The node's raw capacity as the kubelet reports it."""
    pods = max_pods if max_pods is not None else (it.max_pods or DEFAULT_MAX_PODS)
    return Resources(cpu_m=it.millicores, memory=it.memory_bytes, pods=pods, ephemeral_storage=OS_DISK_BYTES)


def allocatable(it: InstanceType, max_pods: int | None = None) -> Resources:
    """Capacity less the AKS reservations and eviction thresholds (never negative)."""
    cap = capacity(it, max_pods)
    reserved = Resources(
        cpu_m=kube_reserved_cpu(it.vcpus),
        memory=kube_reserved_memory(cap.memory, cap.pods) + EVICTION_MEMORY,
        pods=0,
        ephemeral_storage=cap.ephemeral_storage * NODEFS_EVICTION_PERCENT // 100,
    )
    return (cap - reserved).clamp()


def pods_that_fit(
    it: InstanceType, per_pod: Resources, overhead: Resources, max_pods: int | None = None
) -> int:
    """How many pods requesting ``per_pod`` fit on one node after ``overhead`` (DaemonSets).

    Each pod takes one pod slot (``per_pod.pods`` when larger). Zero when the overhead
    alone does not fit; a pod that requests nothing is bounded by the pod slots only.
    """
    free = allocatable(it, max_pods) - overhead
    if free.is_negative():
        return 0
    limits = [free.pods // max(per_pod.pods, 1)]
    for need, have in (
        (per_pod.cpu_m, free.cpu_m),
        (per_pod.memory, free.memory),
        (per_pod.ephemeral_storage, free.ephemeral_storage),
    ):
        if need > 0:
            limits.append(have // need)
    return min(limits)
