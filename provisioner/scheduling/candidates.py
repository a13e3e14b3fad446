"""Which sizes a NodePool may buy for a group of pods, and what each leaves for them.

An ``Option`` is one buyable (instance type, capacity type) pair under one NodePool: its
price, vCPUs, quota family, the zones it is offered in, and the room it leaves for pods
(allocatable after AKS reservations, less the pool's DaemonSet overhead), as plain integers.

The work is done once and cached:

- per catalog (keyed by the catalog object's identity): each size's label set;
- per (catalog, NodePool, pod term, overhead, max pods, unavailable offerings): the
  compatible options, cheapest first, and their *frontier*: the options that no other
  option of the same capacity type beats on price, vCPUs and every resource at once. The
  frontier is all the packer needs to look at; the full list is what a NodeClaim carries.

A requirement is judged where its key is decided: instance-type labels (well-known and
``karpenter.azure.com/sku-*``) per size, ``topology.kubernetes.io/zone`` per offering zone
(labels read ``<region>-<zone>``), ``karpenter.sh/capacity-type`` per capacity type, the
pool's template labels (and ``karpenter.sh/nodepool``) as fixed labels, and any other key
against the pool's own requirements. A pool with no capacity-type requirement buys
on-demand only, as Karpenter defaults it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from provisioner.model.allocatable import allocatable
from provisioner.model.catalog import Catalog
from provisioner.model.instance_type import CAPACITY_TYPES, InstanceType
from provisioner.model.nodepool import NodePool
from provisioner.model.requirements import (
    CAPACITY_TYPE,
    DOES_NOT_EXIST,
    EXISTS,
    IN,
    INSTANCE_TYPE,
    NOT_IN,
    SKU_LABEL_PREFIX,
    ZONE,
    Requirement,
    Requirements,
)
from provisioner.model.resources import Resources

__all__ = ["Candidates", "Option", "candidates", "pool_requirements", "zone_label"]

_SKU_KEYS = frozenset(
    SKU_LABEL_PREFIX + s
    for s in (
        "name", "family", "series", "version", "cpu", "memory", "networking-accelerated",
        "storage-premium-capable", "gpu-name", "gpu-count", "gpu-manufacturer",
    )
)


def zone_label(region: str, zone: str) -> str:
    """The ``topology.kubernetes.io/zone`` value of an Azure zone: ``westus2-1``; "" if regional."""
    return f"{region}-{zone}" if zone else ""


@dataclass(frozen=True, slots=True)
class Option:
    name: str
    capacity_type: str
    price: float
    vcpus: int
    family: str
    cpu: int  # millicores left for pods after reservations and DaemonSet overhead
    mem: int
    pods: int
    eph: int
    cap_cpu: int  # capacity, as NodePool limits count it
    cap_mem: int
    zones: tuple[str, ...]  # zone labels offered; () when the size is regional only
    rank: int  # position in the cheapest-first order

    def fits(self, cpu: int, mem: int, pods: int, eph: int) -> bool:
        return cpu <= self.cpu and mem <= self.mem and pods <= self.pods and eph <= self.eph


@dataclass(frozen=True, slots=True)
class Candidates:
    options: tuple[Option, ...]  # every compatible option, cheapest first
    frontier: tuple[Option, ...]
    conflict: str = ""  # why the pool cannot take the term at all (requirements), if so
    matched_types: int = 0  # sizes whose labels satisfy the requirements
    unavailable_types: int = 0  # of those, sizes with no available offering left
    overhead_too_big: int = 0  # of those, sizes the DaemonSet overhead alone fills


class _Table:
    """Per-catalog precomputation: label sets and the keys sizes decide."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.types: tuple[InstanceType, ...] = catalog.types
        self.labels = [it.labels() for it in self.types]
        keys = set(_SKU_KEYS) | {INSTANCE_TYPE}
        for labels in self.labels:
            keys.update(labels)
        self.type_keys = frozenset(keys)
        self.alloc: dict[tuple[int, int | None], Resources] = {}

    def allocatable(self, index: int, max_pods: int | None) -> Resources:
        key = (index, max_pods)
        found = self.alloc.get(key)
        if found is None:
            found = self.alloc[key] = allocatable(self.types[index], max_pods)
        return found


_TABLES: dict[int, _Table] = {}
_CANDIDATES: dict[tuple[Any, ...], Candidates] = {}
_CACHE_LIMIT = 4096


def _table(catalog: Catalog) -> _Table:
    table = _TABLES.get(id(catalog))
    if table is None or table.catalog is not catalog:
        if len(_TABLES) > 16:
            _TABLES.clear()
            _CANDIDATES.clear()
        table = _TABLES[id(catalog)] = _Table(catalog)
    return table


def pool_requirements(pool: NodePool) -> Requirements:
    """A pool's requirements with Karpenter's default: on-demand when capacity type is unsaid."""
    if pool.requirements.on(CAPACITY_TYPE):
        return pool.requirements
    return pool.requirements.intersect(Requirements.of(Requirement(CAPACITY_TYPE, IN, ("on-demand",))))


def _pool_conflict(pool: NodePool, reqs: Requirements, term: Requirements, decided: frozenset[str]) -> str:
    """Why the pool cannot satisfy ``term`` on keys no size decides; "" when it can."""
    fixed = pool.label_map
    for key in sorted(reqs.keys() - decided):
        on_key = reqs.on(key)
        if key in fixed:
            bad = [r for r in on_key if not r.allows(fixed[key])]
            if bad:
                return f"nodepool {pool.name} labels nodes {key}={fixed[key]}, which fails {bad[0]}"
            continue
        pool_on_key = pool.requirements.on(key)
        creates_label = any(r.operator not in (NOT_IN, DOES_NOT_EXIST) for r in pool_on_key)
        if creates_label:
            if Requirements((*pool_on_key, Requirement(key, EXISTS))).conflicts(Requirements(on_key)):
                return f"{', '.join(str(r) for r in term.on(key))} conflicts with nodepool {pool.name}'s " + ", ".join(
                    str(r) for r in pool_on_key
                )
        elif not all(r.allows(None) for r in on_key):
            wanted = ", ".join(str(r) for r in on_key if not r.allows(None))
            return f"{wanted}: nodepool {pool.name} does not give its nodes the label {key}"
    return ""


def _frontier(options: list[Option]) -> tuple[Option, ...]:
    kept: list[Option] = []
    for o in options:  # cheapest first, so any dominating option is already kept
        dominated = False
        for k in kept:
            if (
                k.capacity_type == o.capacity_type
                and k.vcpus <= o.vcpus
                and k.cpu >= o.cpu
                and k.mem >= o.mem
                and k.pods >= o.pods
                and k.eph >= o.eph
            ):
                dominated = True
                break
        if not dominated:
            kept.append(o)
    return tuple(kept)


def candidates(
    catalog: Catalog,
    pool: NodePool,
    term: Requirements,
    overhead: Resources,
    max_pods: int | None = None,
    unavailable: frozenset[tuple[str, str, str]] = frozenset(),
) -> Candidates:
    """The options ``pool`` may buy for pods whose node-selector term is ``term`` (cached)."""
    key = (id(catalog), pool, term, overhead, max_pods, unavailable)
    found = _CANDIDATES.get(key)
    if found is not None and _TABLES.get(id(catalog)) is not None and _TABLES[id(catalog)].catalog is catalog:
        return found
    table = _table(catalog)
    result = _compute(table, pool, term, overhead, max_pods, unavailable)
    if len(_CANDIDATES) > _CACHE_LIMIT:
        _CANDIDATES.clear()
    _CANDIDATES[key] = result
    return result


def _compute(
    table: _Table,
    pool: NodePool,
    term: Requirements,
    overhead: Resources,
    max_pods: int | None,
    unavailable: frozenset[tuple[str, str, str]],
) -> Candidates:
    reqs = pool_requirements(pool).intersect(term)
    decided = table.type_keys | {ZONE, CAPACITY_TYPE}
    conflict = _pool_conflict(pool, reqs, term, decided)
    if not conflict:
        clash = [k for k in reqs.conflicts(Requirements()) if k in decided]
        if clash:
            conflict = f"{term.only(clash)} conflicts with nodepool {pool.name}'s {pool.requirements.only(clash)}"
    if conflict:
        return Candidates((), (), conflict=conflict)
    type_reqs = reqs.only(table.type_keys)
    zone_reqs = reqs.on(ZONE)
    capacity_types = [ct for ct in CAPACITY_TYPES if all(r.allows(ct) for r in reqs.on(CAPACITY_TYPE))]
    region = table.catalog.region
    raw: list[tuple[float, int, str, str, Option]] = []
    matched = unavailable_types = too_big = 0
    for index, it in enumerate(table.types):
        if not type_reqs.matches(table.labels[index]):
            continue
        matched += 1
        free = table.allocatable(index, max_pods) - overhead
        if free.is_negative() or free.pods < 1:
            too_big += 1
            continue
        offered = False
        for ct in capacity_types:
            price = it.price(ct)
            if price is None or it.not_available:
                continue
            zones = tuple(
                zone_label(region, z)
                for z in (it.zones or ("",))
                if z not in it.restricted_zones
                and (ct, it.name, zone_label(region, z)) not in unavailable
                and (ct, it.name, z) not in unavailable
                and all(r.allows(zone_label(region, z) or None) for r in zone_reqs)
            )
            if not zones:
                continue
            offered = True
            option = Option(
                name=it.name,
                capacity_type=ct,
                price=price,
                vcpus=it.vcpus,
                family=it.family,
                cpu=free.cpu_m,
                mem=free.memory,
                pods=free.pods,
                eph=free.ephemeral_storage,
                cap_cpu=it.millicores,
                cap_mem=it.memory_bytes,
                zones=tuple(z for z in zones if z),
                rank=0,
            )
            raw.append((price, 0 if ct == "spot" else 1, it.name, ct, option))
        if not offered:
            unavailable_types += 1
    raw.sort(key=lambda t: (t[0], t[1], t[4].vcpus, t[2]))
    options = [
        Option(o.name, o.capacity_type, o.price, o.vcpus, o.family, o.cpu, o.mem, o.pods, o.eph, o.cap_cpu, o.cap_mem, o.zones, rank)
        for rank, (_, _, _, _, o) in enumerate(raw)
    ]
    return Candidates(
        options=tuple(options),
        frontier=_frontier(options),
        matched_types=matched,
        unavailable_types=unavailable_types,
        overhead_too_big=too_big,
    )
