"""The planner: a frozen Snapshot in, a Plan out. Pure: no I/O, no clock, no logging.

Steps:

1. Pending pods become equivalence classes, grouped by what they demand of a node
   (``classes.classify``).
2. Each class goes first onto existing nodes and in-flight NodeClaims that it tolerates
   and matches, as many pods per node as fit (a division per node).
3. Each group then tries the NodePools in weight order (highest first, then name): the
   pool's taints must be tolerated, a node-selector term must be compatible, and the
   compatible sizes (``candidates``) are packed (``packing``) within a ``Ledger`` of quota
   headroom and NodePool limits.
   - ``quota_aware=True``: the cheapest mix that fits the headroom; when the headroom cannot
     hold every pod, the most pods within it, then the lowest price. A NodeClaim's options
     are the sizes that fit its pods *and* the headroom left.
   - ``quota_aware=False``: Karpenter's behaviour, blind to quota: grow each node while
     some size holds it, then take the cheapest size that fits (NodePool limits still hold).
4. Every pod left gets a ``Reason`` (``reasons``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from provisioner.model.allocatable import allocatable
from provisioner.model.instance_type import InstanceType
from provisioner.model.nodepool import NodeClaimStatus, NodePool
from provisioner.model.pod import DAEMONSET, NODE, Pod
from provisioner.model.requirements import CAPACITY_TYPE, INSTANCE_TYPE, ZONE
from provisioner.model.resources import Resources
from provisioner.model.taints import Taint, untolerated
from provisioner.scheduling.candidates import Candidates, Option, candidates
from provisioner.scheduling.classes import Group, PodClass, classify
from provisioner.scheduling.ledger import Ledger, PoolLimit
from provisioner.scheduling.packing import Bin, Demand, fit_count, pack_cheapest, pack_karpenter
from provisioner.scheduling.plan import (
    InstanceOption,
    NewNodeClaim,
    Placement,
    Plan,
    Reason,
    ReasonCode,
    Unplaced,
)
from provisioner.scheduling.reasons import Needs, best_note, budget_reason
from provisioner.scheduling.scarcity import pack_scarce
from provisioner.scheduling.snapshot import Snapshot

__all__ = ["PlanOptions", "plan"]


@dataclass(frozen=True, slots=True)
class PlanOptions:
    quota_aware: bool = True
    max_options: int = 600  # Karpenter passes at most 600 sizes to a launch


@dataclass(slots=True)
class _OpenNode:
    name: str
    kind: str  # "node" or "nodeclaim"
    labels: dict[str, str]
    taints: tuple[Taint, ...]
    free: list[int]


@dataclass(slots=True)
class _Draft:
    """A new node being planned: later groups may still add pods to it while it has room."""

    pool: NodePool
    option: Option
    cands: Candidates
    overhead: Resources
    used: list[int]  # what its pods request (overhead not included)
    pods: list[Pod]
    labels: dict[str, str] | None = None


def _open_nodes(snapshot: Snapshot) -> list[_OpenNode]:
    out: list[_OpenNode] = []
    node_names = {n.name for n in snapshot.nodes}
    for n in snapshot.nodes:
        if n.unschedulable:
            continue
        f = n.free
        out.append(_OpenNode(n.name, "node", n.label_map, n.taints, [f.cpu_m, f.memory, f.pods, f.ephemeral_storage]))
    for claim in snapshot.in_flight:
        if claim.status not in NodeClaimStatus.IN_FLIGHT or (claim.node_name and claim.node_name in node_names):
            continue
        it = snapshot.catalog.get(claim.size) if claim.size else None
        if it is None:
            continue
        labels = it.labels() | dict(claim.labels)
        pool = next((p for p in snapshot.nodepools if p.name == claim.nodepool), None)
        if pool is not None:
            labels |= pool.label_map
        labels[CAPACITY_TYPE] = claim.capacity_type
        labels[INSTANCE_TYPE] = it.name
        if claim.zone:
            labels[ZONE] = claim.zone
        alloc = claim.allocatable or allocatable(it, snapshot.max_pods(pool) if pool else None)
        f = (alloc - claim.requests).clamp()
        out.append(_OpenNode(claim.name, "nodeclaim", labels, claim.taints, [f.cpu_m, f.memory, f.pods, f.ephemeral_storage]))
    return out


def _place_on_open(group: Group, nodes: list[_OpenNode], placements: list[Placement]) -> None:
    usable = [
        n for n in nodes
        if not untolerated(n.taints, group.tolerations) and any(t.matches(n.labels) for t in group.terms)
    ]
    if not usable:
        return
    for cls in group.classes:
        rc, rm, rp, re_ = cls.vector
        for node in usable:
            n = cls.count - cls.taken
            if not n:
                break
            c, m, p, e = node.free
            k = min(n, fit_count(c, m, p, e, cls.vector))
            if k <= 0:
                continue
            node.free = [c - k * rc, m - k * rm, p - k * rp, e - k * re_]
            placements.extend(Placement(pod.key, node.name, node.kind) for pod in cls.take(k))


def _claim_name(pool: str, first_pod: str, taken: set[str]) -> str:
    """``<nodepool>-<5 chars>`` from the claim's first pod: the same input gives the same name."""
    salt = 0
    while True:
        digest = hashlib.blake2b(f"{pool}/{first_pod}/{salt}".encode(), digest_size=4).hexdigest()
        name = f"{pool}-{digest[:5]}"
        if name not in taken:
            taken.add(name)
            return name
        salt += 1


class _Planner:
    def __init__(self, snapshot: Snapshot, options: PlanOptions) -> None:
        self.snapshot = snapshot
        self.options = options
        self.quotas = snapshot.quotas()
        self.pools = sorted(snapshot.nodepools, key=lambda p: (-p.weight, p.name))
        self.pool_limits: dict[str, tuple[tuple[int | None, ...], tuple[int | None, ...]]] = {}
        limits: dict[str, PoolLimit] = {}
        for pool in self.pools:
            if pool.limits:
                cpu, mem, nodes = snapshot.nodepool_usage(pool.name)
                lim = pool.limits
                left = (
                    None if lim.cpu_m is None else lim.cpu_m - cpu,
                    None if lim.memory is None else lim.memory - mem,
                    None if lim.nodes is None else lim.nodes - nodes,
                )
                limits[pool.name] = left
                self.pool_limits[pool.name] = ((lim.cpu_m, lim.memory, lim.nodes), left)
        quota_left = {name: q.left for name, q in self.quotas.items()} if options.quota_aware else None
        self.ledger = Ledger(quota_left, limits)
        self.drafts: list[_Draft] = []
        self.notes: dict[int, list[Reason]] = {}
        self.blocked: dict[int, tuple[Group, NodePool, Candidates]] = {}
        self._inst: dict[int, tuple[Candidates, list[InstanceOption]]] = {}
        self.names: set[str] = {c.name for c in snapshot.in_flight}
        self._types: dict[str, InstanceType] | None = None

    def _note(self, cls: PodClass, reason: Reason) -> None:
        self.notes.setdefault(id(cls), []).append(reason)

    def _candidates(self, group: Group, pool: NodePool) -> Candidates | None:
        snap = self.snapshot
        overhead = snap.overhead(pool.name)
        first: Candidates | None = None
        for term in group.terms:
            cands = candidates(snap.catalog, pool, term, overhead, snap.max_pods(pool), snap.unavailable)
            if cands.options:
                return cands
            first = first or cands
        assert first is not None
        live = [c for c in group.classes if c.taken < c.count]
        if first.conflict:
            reason = Reason(ReasonCode.REQUIREMENTS, first.conflict, pool.name)
        elif first.matched_types == 0:
            reason = Reason(ReasonCode.NO_COMPATIBLE_INSTANCE_TYPE,
                            f"no size in the {snap.catalog.region} catalog meets nodepool {pool.name}'s requirements "
                            f"and the pod's ({', '.join(str(t) for t in group.terms)})", pool.name)
        elif first.overhead_too_big == first.matched_types:
            reason = Reason(ReasonCode.TOO_LARGE,
                            f"DaemonSet overhead {overhead.to_requests()} leaves no room on any of the "
                            f"{first.matched_types} sizes nodepool {pool.name} allows", pool.name)
        else:
            reason = Reason(ReasonCode.NO_COMPATIBLE_INSTANCE_TYPE,
                            f"all {first.matched_types} sizes nodepool {pool.name} allows for this pod are unavailable "
                            f"({first.unavailable_types} with no offering left in an allowed zone and capacity type)",
                            pool.name)
        for cls in live:
            self._note(cls, reason)
        return None

    def _too_large(self, cls: PodClass, cands: Candidates, pool: NodePool) -> Reason:
        biggest = max(cands.frontier, key=lambda o: (o.cpu, o.mem))
        need = Resources(*cls.vector).to_requests()
        return Reason(
            ReasonCode.TOO_LARGE,
            f"requests {need} do not fit the largest size nodepool {pool.name} allows, {biggest.name}, "
            f"which leaves cpu {biggest.cpu}m, memory {biggest.mem // 2**20}Mi, pods {biggest.pods} "
            f"after reservations and DaemonSet overhead",
            pool.name,
        )

    def _draft_labels(self, d: _Draft) -> dict[str, str]:
        if d.labels is None:
            if self._types is None:
                self._types = {it.name: it for it in self.snapshot.catalog.types}
            labels = self._types[d.option.name].labels() | d.pool.label_map
            labels[CAPACITY_TYPE] = d.option.capacity_type
            if len(d.option.zones) == 1:
                labels[ZONE] = d.option.zones[0]
            d.labels = labels
        return d.labels

    def _place_on_drafts(self, group: Group) -> None:
        usable = [
            d for d in self.drafts
            if not untolerated(d.pool.taints, group.tolerations)
            and any(t.matches(self._draft_labels(d)) for t in group.terms)
        ]
        for cls in group.classes:
            rc, rm, rp, re_ = cls.vector
            for d in usable:
                n = cls.count - cls.taken
                if not n:
                    break
                o, (c, m, p, e) = d.option, d.used
                k = min(n, fit_count(o.cpu - c, o.mem - m, o.pods - p, o.eph - e, cls.vector))
                if k <= 0:
                    continue
                d.used = [c + k * rc, m + k * rm, p + k * rp, e + k * re_]
                d.pods.extend(cls.take(k))

    def plan_group(self, group: Group) -> None:
        if self.drafts:
            self._place_on_drafts(group)
        for pool in self.pools:
            live = [c for c in group.classes if c.taken < c.count]
            if not live:
                return
            bad = untolerated(pool.taints, group.tolerations)
            if bad:
                reason = Reason(ReasonCode.TAINTS, f"nodepool {pool.name} taints {', '.join(map(str, bad))} "
                                f"are not tolerated", pool.name)
                for cls in live:
                    self._note(cls, reason)
                continue
            cands = self._candidates(group, pool)
            if cands is None:
                continue
            fitting: list[PodClass] = []
            for cls in live:
                rc, rm, rp, re_ = cls.vector
                if any(rc <= o.cpu and rm <= o.mem and rp <= o.pods and re_ <= o.eph for o in cands.frontier):
                    fitting.append(cls)
                else:
                    self._note(cls, self._too_large(cls, cands, pool))
            if not fitting:
                continue
            self._pack(group, fitting, pool, cands)

    def _pack(self, group: Group, fitting: list[PodClass], pool: NodePool, cands: Candidates) -> None:
        demand = Demand([c.vector for c in fitting], [c.count - c.taken for c in fitting])
        classes = fitting
        if not self.options.quota_aware:
            bins = pack_karpenter(demand, cands.frontier, cands.options, self.ledger, pool.name)
        else:
            trial = self.ledger.copy()
            bins = pack_cheapest(demand, cands.frontier, trial, pool.name)
            if demand.left():
                # budgets cannot hold everything: most pods first (smallest first within a priority)
                scarce = sorted(fitting, key=lambda c: (-c.priority, c.vector[0], c.vector[1], c.vector[3], c.first.key))
                demand2 = Demand([c.vector for c in scarce], [c.count - c.taken for c in scarce])
                trial2 = self.ledger.copy()
                bins2 = pack_scarce(demand2, cands.frontier, trial2, pool.name)
                placed, placed2 = sum(b.pods for b in bins), sum(b.pods for b in bins2)
                cost = sum(b.option.price * b.copies for b in bins)
                cost2 = sum(b.option.price * b.copies for b in bins2)
                if placed2 > placed or (placed2 == placed and cost2 < cost):
                    bins, trial, classes = bins2, trial2, scarce
            self.ledger = trial
        overhead = self.snapshot.overhead(pool.name)
        for b in bins:
            self._materialize(b, classes, pool, cands, overhead)
        for cls in fitting:
            if cls.taken < cls.count and id(cls) not in self.blocked:
                self.blocked[id(cls)] = (group, pool, cands)

    def _options_for(self, option: Option, used: tuple[int, ...], pool: str,
                     cands: Candidates) -> tuple[InstanceOption, ...]:
        """The sizes a claim may launch as: its chosen size first, then every size that holds its
        pods (and, when budgets apply, fits what is left of them), cheapest first."""
        cached = self._inst.get(id(cands))
        if cached is None or cached[0] is not cands:
            inst = [InstanceOption(o.name, o.capacity_type, o.price, o.vcpus) for o in cands.options]
            cached = self._inst[id(cands)] = (cands, inst)
        inst = cached[1]
        c, m, p, e = used
        ledger = self.ledger
        rank = option.rank
        fitting = [o for o in cands.options if c <= o.cpu and m <= o.mem and p <= o.pods and e <= o.eph and o.rank != rank]
        if not ledger.unlimited:
            ledger.give(option, pool, 1)
            fitting = [o for o in fitting if ledger.copies(o, pool) > 0]
            ledger.take(option, pool, 1)
        return (inst[rank], *(inst[o.rank] for o in fitting[: self.options.max_options - 1]))

    def _materialize(self, b: Bin, fitting: list[PodClass], pool: NodePool, cands: Candidates,
                     overhead: Resources) -> None:
        for _ in range(b.copies):
            pods: list[Pod] = []
            for i, k in b.counts:
                pods.extend(fitting[i].take(k))
            self.drafts.append(_Draft(pool, b.option, cands, overhead, list(b.used), pods))

    def claims(self) -> list[NewNodeClaim]:
        out: list[NewNodeClaim] = []
        memo: dict[tuple[int, int, tuple[int, ...]], tuple[InstanceOption, ...]] = {}
        for d in self.drafts:
            o, used = d.option, tuple(d.used)
            key = (id(d.cands), o.rank, used)
            options = memo.get(key)
            if options is None:
                options = memo[key] = self._options_for(o, used, d.pool.name, d.cands)
            out.append(
                NewNodeClaim(
                    name=_claim_name(d.pool.name, d.pods[0].key, self.names),
                    nodepool=d.pool.name,
                    instance_type=o.name,
                    capacity_type=o.capacity_type,
                    zone=o.zones[0] if len(o.zones) == 1 else "",
                    zones=o.zones,
                    pods=tuple(p.key for p in d.pods),
                    requests=Resources(*used) + d.overhead,
                    options=options,
                    price_per_hour=o.price,
                    vcpus=o.vcpus,
                    quota_family=o.family,
                )
            )
        return out

    def unplaced(self, groups: list[Group]) -> list[Unplaced]:
        out: list[Unplaced] = []
        total = Needs()
        needs_of: dict[int, tuple[Needs, str, int]] = {}  # by group: what its waiting pods need
        for gi, group in enumerate(groups):
            by_pool: dict[str, tuple[NodePool, Candidates, list[PodClass]]] = {}
            for cls in group.classes:
                entry = self.blocked.get(id(cls))
                if entry is not None and cls.taken < cls.count:
                    by_pool.setdefault(entry[1].name, (entry[1], entry[2], []))[2].append(cls)
            for pool, cands, classes in by_pool.values():
                demand = Demand([c.vector for c in classes], [c.count - c.taken for c in classes])
                needs = Needs()
                needs.add(pack_cheapest(demand, cands.frontier, Ledger(None, {}), pool.name), pool.name)
                total.merge(needs)
                for cls in classes:
                    needs_of[id(cls)] = (needs, pool.name, gi)
        waiting = sum(c.count - c.taken for g in groups for c in g.classes if id(c) in needs_of)
        for group in groups:
            for cls in group.classes:
                rest = cls.rest()
                if not rest:
                    continue
                owed = needs_of.get(id(cls))
                if owed is not None:
                    reason = budget_reason(owed[0], total, waiting, owed[1], self.quotas, self.pool_limits,
                                           self.ledger)
                else:
                    reason = best_note(self.notes.get(id(cls), []))
                out.extend(Unplaced(p.key, reason) for p in rest)
        return out


def plan(snapshot: Snapshot, options: PlanOptions | None = None) -> Plan:
    """Plan NodeClaims for the snapshot's pending pods; every pod is placed or given a reason."""
    options = options or PlanOptions()
    groups = classify(p for p in snapshot.pods if not p.node_name and p.owner_kind not in (DAEMONSET, NODE))
    placements: list[Placement] = []
    nodes = _open_nodes(snapshot)
    if nodes:
        for group in groups:
            _place_on_open(group, nodes, placements)
    planner = _Planner(snapshot, options)
    for group in groups:
        planner.plan_group(group)
    unplaced = planner.unplaced(groups)
    return Plan(tuple(planner.claims()), tuple(placements), tuple(unplaced), options.quota_aware)
