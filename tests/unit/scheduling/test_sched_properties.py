"""Invariants of the planner, checked on generated snapshots (hypothesis)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provisioner.model.allocatable import allocatable
from provisioner.model.catalog import Catalog, load_catalog
from provisioner.model.nodepool import Limits, Node, NodePool
from provisioner.model.pod import Pod
from provisioner.model.quota import QuotaSnapshot, QuotaUsage
from provisioner.model.requirements import ZONE, Requirement, Requirements
from provisioner.model.resources import Resources
from provisioner.model.taints import Taint, Toleration
from provisioner.scheduling.snapshot import Snapshot
from provisioner.scheduling.solver import PlanOptions, plan

CATALOG: Catalog = load_catalog("westus2")
FAMILIES = ("standardDLSv5Family", "standardDASv5Family", "standardDv5Family", "standardESv5Family")
MIB = 2**20

shapes = st.tuples(
    st.sampled_from([100, 250, 500, 1000, 1500, 2000, 4000, 7000, 20000]),
    st.sampled_from([64, 256, 512, 1024, 4096, 16384]),
    st.sampled_from([0, 0, 0, 2**30]),
    st.sampled_from(["", "", "westus2-1", "westus2-3"]),
    st.booleans(),  # tolerates the batch taint
    st.integers(0, 1),  # priority
)


@st.composite
def snapshots(draw: Any) -> Snapshot:
    kinds = draw(st.lists(shapes, min_size=1, max_size=5))
    pods: list[Pod] = []
    for k, (cpu, mem, eph, zone, tolerant, prio) in enumerate(kinds):
        for i in range(draw(st.integers(1, 25))):
            pods.append(Pod(
                f"ns{k % 2}", f"w{k}-{i}", Resources(cpu, mem * MIB, 1, eph),
                node_selector={ZONE: zone} if zone else {},
                tolerations=(Toleration("batch", "Exists"),) if tolerant else (),
                priority=prio * 100,
            ))
    pools = [NodePool(
        "general",
        Requirements.of(
            Requirement("karpenter.azure.com/sku-family", "In", tuple(draw(st.sets(st.sampled_from("DEF"), min_size=1)))),
            Requirement("karpenter.sh/capacity-type", "In",
                        tuple(draw(st.sets(st.sampled_from(["spot", "on-demand"]), min_size=1)))),
            Requirement("kubernetes.io/arch", "In", ("amd64",)),
        ),
        limits=Limits(cpu_m=draw(st.sampled_from([None, 8000, 32000, 100000]))),
        weight=draw(st.integers(0, 100)),
    )]
    if draw(st.booleans()):
        pools.append(NodePool("batch", Requirements.of(Requirement("karpenter.sh/capacity-type", "In", ("spot",))),
                              taints=(Taint("batch", "NoSchedule"),), weight=draw(st.integers(0, 100)),
                              limits=Limits(nodes=draw(st.sampled_from([None, 1, 3])))))
    items = {"cores": QuotaUsage("cores", 100, draw(st.integers(40, 100)))}
    if draw(st.booleans()):
        items["lowPriorityCores"] = QuotaUsage("lowPriorityCores", 20, draw(st.integers(0, 20)))
    for fam in draw(st.sets(st.sampled_from(FAMILIES), max_size=3)):
        items[fam] = QuotaUsage(fam, 32, draw(st.integers(0, 32)))
    nodes = tuple(
        Node(f"node-{i}", Resources(3860, 12 * 2**30, 30), Resources(draw(st.integers(0, 3860)), 0, 5))
        for i in range(draw(st.integers(0, 2)))
    )
    overhead = Resources(250, 470 * MIB, 5)
    return Snapshot(
        pods=tuple(pods), nodepools=tuple(pools), catalog=CATALOG, nodes=nodes,
        quota=QuotaSnapshot("westus2", datetime(2026, 1, 1), "test", items),
        daemonset_overhead={p.name: overhead for p in pools},
    )


def _check(snapshot: Snapshot, quota_aware: bool) -> None:
    result = plan(snapshot, PlanOptions(quota_aware=quota_aware))
    # every pending pod is placed exactly once or given a reason
    seen = Counter([p for c in result.nodeclaims for p in c.pods] + [p.pod for p in result.placements]
                   + [u.pod for u in result.unplaced])
    assert seen == Counter(p.key for p in snapshot.pods)
    assert all(u.reason.message for u in result.unplaced)
    pods = {p.key: p for p in snapshot.pods}
    # no node over capacity: pods plus overhead within the size's allocatable
    for claim in result.nodeclaims:
        it = CATALOG.get(claim.instance_type)
        assert it is not None
        total = Resources()
        for key in claim.pods:
            total = total + pods[key].requests
        assert total + snapshot.overhead(claim.nodepool) == claim.requests
        assert claim.requests.fits(allocatable(it))
        assert claim.options[0].name == claim.instance_type
        pool = next(p for p in snapshot.nodepools if p.name == claim.nodepool)
        labels = it.labels() | pool.label_map | {"karpenter.sh/capacity-type": claim.capacity_type}
        assert pool.requirements.matches(labels)
        for key in claim.pods:
            pod_labels = labels | ({ZONE: claim.zone} if claim.zone else {})
            assert any(t.matches(pod_labels) for t in pods[key].terms)
    # existing nodes never go over their free capacity
    for node in snapshot.nodes:
        total = Resources()
        for pl in result.placements:
            if pl.target == node.name:
                total = total + pods[pl.pod].requests
        assert total.fits(node.free)
    # NodePool limits hold in both modes
    for pool in snapshot.nodepools:
        mine = [c for c in result.nodeclaims if c.nodepool == pool.name]
        if pool.limits.cpu_m is not None:
            assert sum(c.vcpus * 1000 for c in mine) <= pool.limits.cpu_m
        if pool.limits.nodes is not None:
            assert len(mine) <= pool.limits.nodes
    # quota headroom holds when quota-aware: regional, each family, spot
    if quota_aware:
        quotas = snapshot.quotas()
        spent: Counter[str] = Counter()
        for c in result.nodeclaims:
            if c.capacity_type == "spot":
                spent["lowPriorityCores"] += c.vcpus
            else:
                spent["cores"] += c.vcpus
                spent[c.quota_family] += c.vcpus
        for name, used in spent.items():
            if name in quotas:
                assert used <= quotas[name].left, name


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots(), st.booleans())
def test_plan_invariants(snapshot: Snapshot, quota_aware: bool) -> None:
    _check(snapshot, quota_aware)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots(), st.randoms(use_true_random=False), st.booleans())
def test_plan_ignores_input_order(snapshot: Snapshot, rng: Any, quota_aware: bool) -> None:
    pods = list(snapshot.pods)
    rng.shuffle(pods)
    pools = list(snapshot.nodepools)
    rng.shuffle(pools)
    shuffled = Snapshot(tuple(pods), tuple(pools), snapshot.catalog, snapshot.nodes, quota=snapshot.quota,
                        daemonset_overhead=snapshot.daemonset_overhead)
    options = PlanOptions(quota_aware=quota_aware)
    assert plan(shuffled, options).to_dict() == plan(snapshot, options).to_dict()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots())
def test_without_budgets_only_compatibility_keeps_pods_waiting(snapshot: Snapshot) -> None:
    pools = tuple(replace(p, limits=Limits()) for p in snapshot.nodepools)
    result = plan(Snapshot(snapshot.pods, pools, snapshot.catalog, daemonset_overhead=snapshot.daemonset_overhead))
    assert {u.reason.code.value for u in result.unplaced} <= {
        "too-large", "requirements", "taints", "no-compatible-instance-type"
    }
