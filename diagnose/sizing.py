"""Sizing: instance-type figures, what one pending pod asks for, and what fits in a headroom.

The vCPU count of a size comes from the instance-type catalog of the region
(``provisioner.model.catalog``) when it has one, and otherwise from the size name (``Standard_D16ls_v5`` has
16); the report says which. What a node can give to pods comes from the AKS allocatable
model (``provisioner.model.allocatable``), with the memory per vCPU guessed from the
series when the catalog does not know the size.

Per-pod requests are derived from a NodeClaim's requests: the claim asks for its pods plus
the DaemonSet overhead, and its ``pods`` request counts the DaemonSet pods too. So with
``cpu 10250m, memory 2981280Ki, pods 15`` for 10 pending pods there are 5 DaemonSet pods,
and the largest round per-pod amount that leaves a small remainder per DaemonSet pod is
1 CPU and 256M, leaving 250m and 481280Ki of overhead.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from diagnose.findings import Alternative, PodRequests
from provisioner.model.allocatable import (
    DEFAULT_MAX_PODS,
    EVICTION_MEMORY,
    kube_reserved_cpu,
    kube_reserved_memory,
    pods_that_fit,
)
from provisioner.model.catalog import Catalog, load_catalog
from provisioner.model.errors import KarpError
from provisioner.model.instance_type import InstanceType, parse_sku_name
from provisioner.model.quantity import format_cpu
from provisioner.model.resources import Resources

__all__ = [
    "NodeSize",
    "alternatives",
    "best_mix",
    "derive_pod_requests",
    "describe_memory",
    "node_size",
    "vcpus_of",
]

_CPU_STEPS = (1000, 500, 250, 100, 50, 10, 1)
_MEMORY_STEPS = (
    10**9,
    2**30,
    512 * 10**6,
    2**29,
    256 * 10**6,
    2**28,
    128 * 10**6,
    2**27,
    100 * 10**6,
    64 * 10**6,
    2**26,
    10**7,
    2**20,
    10**6,
    1,
)
_SERIES_SIZES = (2, 4, 8, 16, 32, 48, 64, 96)


@dataclass(frozen=True, slots=True)
class NodeSize:
    name: str
    vcpus: int
    memory_mib: int
    source: str  # catalog | name
    family: str = ""
    region: str = ""
    price: float = 0.0


@cache
def _catalog(region: str) -> Catalog | None:
    if not region:
        return None
    try:
        return load_catalog(region)
    except KarpError:  # no bundled catalog for that region: fall back to names
        return None


def _from_catalog(it: InstanceType, region: str) -> NodeSize:
    return NodeSize(it.name, it.vcpus, it.memory_mib, "catalog", it.family, region, it.price_on_demand)


def _memory_per_vcpu_mib(name: str) -> int:
    sku = parse_sku_name(name)
    if sku is None:
        return 4096
    letter = sku.family_letter
    if letter == "E" or letter == "M":
        return 8192
    if letter == "F" or "l" in sku.features:
        return 2048
    return 4096


def node_size(name: str, region: str = "") -> NodeSize | None:
    """Figures of one size: from the catalog when it knows it, else from the name."""
    catalog = _catalog(region)
    if catalog is not None:
        found = catalog.get(name)
        if found is not None:
            return _from_catalog(found, region)
    sku = parse_sku_name(name)
    if sku is None or (sku.version < 3 and sku.family in ("D", "DS") and sku.size_number > 5):
        # old D/DS names (Standard_D14_v2) do not carry their vCPU count
        return None
    return NodeSize(name, sku.size_number, sku.size_number * _memory_per_vcpu_mib(name), "name")


def vcpus_of(name: str, region: str = "") -> int | None:
    size = node_size(name, region)
    return size.vcpus if size else None


def _fallback_allocatable(size: NodeSize) -> tuple[int, int, int]:
    """(cpu millicores, memory bytes, pods) of a size the catalog does not know (AKS 1.29+ rules)."""
    memory = size.memory_mib * 2**20
    reserved_memory = kube_reserved_memory(memory, DEFAULT_MAX_PODS) + EVICTION_MEMORY
    return size.vcpus * 1000 - kube_reserved_cpu(size.vcpus), memory - reserved_memory, DEFAULT_MAX_PODS


def _round_down(average: int, total: int, count: int, helpers: int, steps: tuple[int, ...]) -> tuple[int, int]:
    """Largest round per-pod amount whose remainder is small per DaemonSet pod."""
    if helpers <= 0:
        per = -(-total // count)
        return per, 0
    for step in steps:
        per = average // step * step
        overhead = total - per * count
        if per > 0 and overhead >= 0 and overhead // helpers <= per:
            return per, overhead
    return average, total - average * count


def describe_memory(num_bytes: int) -> str:
    """Kubernetes-style memory text that reads well: 256M, 1Gi, 481280Ki."""
    for suffix, unit in (("Gi", 2**30), ("G", 10**9), ("Mi", 2**20), ("M", 10**6), ("Ki", 2**10), ("k", 10**3)):
        if num_bytes and num_bytes % unit == 0:
            return f"{num_bytes // unit}{suffix}"
    return str(num_bytes)


def derive_pod_requests(
    cpu_m: int | None, memory: int | None, pods_requested: int | None, pending: int, claim: str
) -> PodRequests | None:
    """Per-pod requests and DaemonSet overhead from a NodeClaim's requests (see module doc)."""
    if not cpu_m or pending <= 0:
        return None
    helpers = max((pods_requested or pending) - pending, 0)
    cpu_per, cpu_over = _round_down(cpu_m // pending, cpu_m, pending, helpers, _CPU_STEPS)
    mem_per, mem_over = (0, 0)
    if memory:
        mem_per, mem_over = _round_down(memory // pending, memory, pending, helpers, _MEMORY_STEPS)
    requested = f"cpu {format_cpu(cpu_m)}" + (f", memory {describe_memory(memory)}" if memory else "")
    if pods_requested:
        requested += f", pods {pods_requested}"
    derivation = f"NodeClaim {claim} requested {requested} for {pending} pending pods"
    if helpers:
        derivation += (
            f"; {pods_requested} − {pending} = {helpers} DaemonSet pods, so per pod ≈ {format_cpu(cpu_per)} CPU"
            + (f", {describe_memory(mem_per)} memory" if memory else "")
            + f" plus a DaemonSet overhead of {format_cpu(cpu_over)} CPU"
            + (f", {describe_memory(mem_over)} memory" if memory else "")
            + " per node (the remainder)"
        )
    else:
        derivation += f"; per pod ≈ {format_cpu(cpu_per)} CPU" + (
            f", {describe_memory(mem_per)} memory" if memory else ""
        )
    return PodRequests(cpu_per, mem_per, cpu_over, mem_over, helpers, derivation)


def pods_per_node(size: NodeSize, per_pod: PodRequests) -> int:
    """How many pods asking ``per_pod`` fit on one node of ``size`` after the DaemonSet overhead."""
    pod = Resources(cpu_m=per_pod.cpu_m, memory=per_pod.memory, pods=1)
    overhead = Resources(cpu_m=per_pod.overhead_cpu_m, memory=per_pod.overhead_memory, pods=per_pod.overhead_pods)
    catalog = _catalog(size.region) if size.source == "catalog" else None
    found = catalog.get(size.name) if catalog is not None else None
    if found is not None:
        return max(pods_that_fit(found, pod, overhead), 0)
    cpu, memory, pods = _fallback_allocatable(size)
    cpu -= overhead.cpu_m
    memory -= overhead.memory
    pods -= overhead.pods
    if cpu < 0 or memory < 0 or pods <= 0:
        return 0
    fits = [cpu // max(pod.cpu_m, 1), pods]
    if pod.memory:
        fits.append(memory // pod.memory)
    return min(fits)


def _family_sizes(selected: str, region: str, headroom: int) -> list[NodeSize]:
    """Sizes of the selected size's family (catalog) or series (name) with at most ``headroom`` vCPUs."""
    sku = parse_sku_name(selected)
    if sku is None:
        return []
    catalog = _catalog(region)
    sizes: list[NodeSize] = []
    if catalog is not None:
        chosen = catalog.get(selected)
        for item in catalog.by_family(sku.family_letter):
            if item.not_available or (chosen is not None and item.arch != chosen.arch):
                continue
            if 0 < item.vcpus <= headroom and item.name != selected:
                sizes.append(_from_catalog(item, region))
        return sizes
    if sku.version < 3:
        return []
    tail = selected[selected.index(str(sku.size_number), len("Standard_")) + len(str(sku.size_number)) :]
    head = f"Standard_{sku.family}"
    for number in _SERIES_SIZES:
        if number <= headroom and number != sku.size_number:
            name = f"{head}{number}{tail}"
            sizes.append(NodeSize(name, number, number * _memory_per_vcpu_mib(name), "name"))
    return sizes


def alternatives(selected: str, region: str, headroom: int, per_pod: PodRequests, pending: int) -> list[Alternative]:
    """Sizes of the same family within ``headroom`` vCPUs, each with the pods it would hold.

    Ordered by pods held, then the selected size's own series first, then price."""
    series = _series(selected)
    ranked: list[tuple[tuple[int, bool, float, int, str], Alternative]] = []
    for size in _family_sizes(selected, region, headroom):
        per_node = pods_per_node(size, per_pod)
        if per_node <= 0:
            continue
        nodes = min(headroom // size.vcpus, -(-pending // per_node))
        option = Alternative(
            size.name, size.vcpus, nodes, per_node, min(nodes * per_node, pending), size.source, size.price or None
        )
        ranked.append(((-option.pods, _series(size.name) != series, size.price, size.vcpus, size.name), option))
    ranked.sort(key=lambda pair: pair[0])
    return [option for _, option in ranked]


def _series(name: str) -> str:
    sku = parse_sku_name(name)
    return sku.series if sku else ""


def best_mix(options: list[Alternative], headroom: int, pending: int) -> list[tuple[Alternative, int]]:
    """The mix of sizes that holds the most pending pods within ``headroom`` vCPUs (ties: fewer vCPUs)."""
    usable = [a for a in options if a.vcpus <= headroom and a.pods_per_node > 0]
    # best[v] = (pods, -vcpus used, choice counts) using at most v vCPUs; headroom is small (quota).
    limit = min(headroom, 4096)
    best: list[tuple[int, int, tuple[int, ...]]] = [(0, 0, tuple(0 for _ in usable))] * (limit + 1)
    for budget in range(1, limit + 1):
        best[budget] = best[budget - 1]
        for index, option in enumerate(usable):
            if option.vcpus > budget:
                continue
            pods, used, counts = best[budget - option.vcpus]
            candidate = (min(pods + option.pods_per_node, pending), used - option.vcpus, counts)
            if candidate[:2] > best[budget][:2]:
                new_counts = list(counts)
                new_counts[index] += 1
                best[budget] = (candidate[0], candidate[1], tuple(new_counts))
    _, _, counts = best[limit]
    return [(option, count) for option, count in zip(usable, counts, strict=True) if count]
