"""Planner behaviour: constraints honoured, budgets respected, reasons given."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from provisioner.model.catalog import Catalog
from provisioner.model.nodepool import Limits, Node, NodeClaim, NodeClaimStatus, NodePool
from provisioner.model.pod import Pod
from provisioner.model.requirements import ZONE, Requirement, Requirements
from provisioner.model.resources import Resources
from provisioner.model.taints import Taint, Toleration
from provisioner.scheduling.overhead import daemonset_overhead
from provisioner.scheduling.plan import ReasonCode
from provisioner.scheduling.snapshot import Snapshot
from provisioner.scheduling.solver import PlanOptions, plan


def snap(kit: Any, catalog: Catalog, pods: tuple[Pod, ...], *pools: NodePool, **kw: Any) -> Snapshot:
    pools = pools or (kit.general_purpose(),)
    kw.setdefault("daemonset_overhead", {p.name: kit.OVERHEAD for p in pools})
    return Snapshot(pods=pods, nodepools=pools, catalog=catalog, now=kit.NOW, **kw)


def sizes(catalog: Catalog, result: Any) -> list[Any]:
    return [catalog.get(c.instance_type) for c in result.nodeclaims]


def test_zone_selector_pins_the_claim_zone(kit: Any, westus2: Catalog) -> None:
    pods = kit.inflate(4, node_selector={ZONE: "westus2-2"})
    result = plan(snap(kit, westus2, pods))
    assert result.pods_placed == 4
    assert all(c.zone == "westus2-2" for c in result.nodeclaims)
    claim = result.nodeclaims[0].to_nodeclaim()
    assert claim.requirements.on(ZONE)[0].values == ("westus2-2",)


def test_required_affinity_on_sku_labels(kit: Any, westus2: Catalog) -> None:
    term = Requirements.of(
        Requirement("karpenter.azure.com/sku-cpu", "Gt", ("8",)),
        Requirement("karpenter.azure.com/sku-cpu", "Lt", ("64",)),
        Requirement("karpenter.azure.com/sku-version", "NotIn", ("5",)),
        Requirement("karpenter.azure.com/sku-gpu-count", "DoesNotExist"),
        Requirement("karpenter.azure.com/sku-storage-premium-capable", "Exists"),
    )
    result = plan(snap(kit, westus2, kit.inflate(5, affinity_terms=(term,))))
    assert result.pods_placed == 5
    for it in sizes(westus2, result):
        assert 8 < it.vcpus < 64 and it.version != 5 and it.sku_family == "D"
    for c in result.nodeclaims:
        for o in c.options:
            it = westus2.get(o.name)
            assert it is not None and 8 < it.vcpus < 64


def test_affinity_terms_are_alternatives(kit: Any, westus2: Catalog) -> None:
    impossible = Requirements.of(Requirement("karpenter.azure.com/sku-family", "In", ("E",)))
    possible = Requirements.of(Requirement("karpenter.azure.com/sku-cpu", "In", ("4",)))
    result = plan(snap(kit, westus2, kit.inflate(3, affinity_terms=(impossible, possible))))
    assert result.pods_placed == 3 and all(it.vcpus == 4 for it in sizes(westus2, result))


def test_taints_need_tolerations(kit: Any, westus2: Catalog) -> None:
    pool = kit.general_purpose(taints=(Taint("dedicated", "NoSchedule", "batch"),))
    result = plan(snap(kit, westus2, kit.inflate(2), pool))
    assert result.pods_placed == 0
    assert {u.reason.code for u in result.unplaced} == {ReasonCode.TAINTS}
    assert "dedicated=batch:NoSchedule" in result.unplaced[0].reason.message
    tolerant = kit.inflate(2, tolerations=(Toleration("dedicated", "Equal", "batch", "NoSchedule"),))
    assert plan(snap(kit, westus2, tolerant, pool)).pods_placed == 2


def test_conflicting_requirements_and_missing_sizes_are_told_apart(kit: Any, westus2: Catalog) -> None:
    family_e = kit.inflate(1, node_selector={"karpenter.azure.com/sku-family": "E"})
    result = plan(snap(kit, westus2, family_e))
    assert result.unplaced[0].reason.code == ReasonCode.REQUIREMENTS
    assert "sku-family" in result.unplaced[0].reason.message
    nosuch = kit.inflate(1, node_selector={"node.kubernetes.io/instance-type": "Standard_D3000_v9"})
    assert plan(snap(kit, westus2, nosuch)).unplaced[0].reason.code == ReasonCode.NO_COMPATIBLE_INSTANCE_TYPE
    custom = kit.inflate(1, node_selector={"team": "a"})
    reason = plan(snap(kit, westus2, custom)).unplaced[0].reason
    assert reason.code == ReasonCode.REQUIREMENTS and "team" in reason.message
    labelled = kit.general_purpose(labels=(("team", "a"),))
    assert plan(snap(kit, westus2, custom, labelled)).pods_placed == 1


def test_too_large_names_the_largest_size(kit: Any, westus2: Catalog) -> None:
    huge = (Pod("default", "huge", Resources(500_000, 2**30)),)
    result = plan(snap(kit, westus2, huge))
    reason = result.unplaced[0].reason
    assert reason.code == ReasonCode.TOO_LARGE and "Standard_D" in reason.message


def test_spot_is_preferred_and_spot_quota_falls_back_to_on_demand(kit: Any, westus2: Catalog) -> None:
    pool = kit.general_purpose(capacity=("spot", "on-demand"))
    result = plan(snap(kit, westus2, kit.inflate(10), pool))
    assert {c.capacity_type for c in result.nodeclaims} == {"spot"}
    no_spot = kit.quota(lowPriorityCores=(10, 10), cores=(100, 0))
    result = plan(snap(kit, westus2, kit.inflate(10), pool, quota=no_spot))
    assert result.pods_placed == 10 and {c.capacity_type for c in result.nodeclaims} == {"on-demand"}
    blind = plan(snap(kit, westus2, kit.inflate(10), pool, quota=no_spot), PlanOptions(quota_aware=False))
    assert {c.capacity_type for c in blind.nodeclaims} == {"spot"}


def test_spot_quota_shortfall_is_reported(kit: Any, westus2: Catalog) -> None:
    pool = kit.general_purpose(capacity=("spot",))
    result = plan(snap(kit, westus2, kit.inflate(10), pool, quota=kit.quota(lowPriorityCores=(12, 8))))
    assert sum(c.vcpus for c in result.nodeclaims) <= 4 and result.pods_placed == 3
    reason = result.unplaced[0].reason
    assert reason.code == ReasonCode.QUOTA_SPOT and reason.quota == "lowPriorityCores"
    assert reason.limit == 12 and reason.usage == 8


def test_family_quota_moves_to_another_family(kit: Any, westus2: Catalog) -> None:
    q = kit.quota(cores=(100, 0), standardDLSv5Family=(10, 10))
    result = plan(snap(kit, westus2, kit.inflate(10), quota=q))
    assert result.pods_placed == 10
    assert all(c.quota_family != "standardDLSv5Family" for c in result.nodeclaims)
    assert all(o.name.find("ls_v5") < 0 for c in result.nodeclaims for o in c.options)


def test_family_quota_shortfall_when_it_is_the_only_family(kit: Any, westus2: Catalog) -> None:
    pool = kit.general_purpose(Requirement("karpenter.azure.com/sku-series", "In", ("Dls_v5",)))
    q = kit.quota(cores=(100, 0), standardDLSv5Family=(10, 6))
    result = plan(snap(kit, westus2, kit.inflate(10), pool, quota=q))
    assert result.vcpus <= 4 and result.pods_placed == 3
    reason = result.unplaced[0].reason
    assert reason.code == ReasonCode.QUOTA_FAMILY and reason.quota == "standardDLSv5Family"
    assert reason.new_limit is not None and reason.new_limit > 10


def test_nodepool_limits_are_never_exceeded(kit: Any, westus2: Catalog) -> None:
    pool = kit.general_purpose(limits=Limits(cpu_m=8000))
    result = plan(snap(kit, westus2, kit.inflate(20), pool))
    assert sum(c.vcpus for c in result.nodeclaims) <= 8
    assert result.pods_placed == 7
    reason = result.unplaced[0].reason
    assert reason.code == ReasonCode.NODEPOOL_LIMIT and reason.quota == "cpu" and "general-purpose" in reason.message
    blind = plan(snap(kit, westus2, kit.inflate(20), pool), PlanOptions(quota_aware=False))
    assert sum(c.vcpus for c in blind.nodeclaims) <= 8
    # existing nodes of the pool count against its limit
    node = Node("n1", Resources(3860, 12 * 2**30, 250), Resources(3860, 0, 1),
                labels=(("karpenter.sh/nodepool", "general-purpose"),
                        ("node.kubernetes.io/instance-type", "Standard_D4ls_v5")))
    result = plan(snap(kit, westus2, kit.inflate(20), pool, nodes=(node,)))
    assert sum(c.vcpus for c in result.nodeclaims) <= 4


def test_weights_order_nodepools(kit: Any, westus2: Catalog) -> None:
    light = kit.general_purpose(name="light", weight=1)
    heavy = NodePool("heavy", Requirements.of(Requirement("karpenter.azure.com/sku-family", "In", ("E",))), weight=50)
    result = plan(snap(kit, westus2, kit.inflate(4), light, heavy))
    assert {c.nodepool for c in result.nodeclaims} == {"heavy"}
    assert all(it.sku_family == "E" for it in sizes(westus2, result))
    capped = replace(heavy, limits=Limits(nodes=0))
    result = plan(snap(kit, westus2, kit.inflate(4), light, capped))
    assert {c.nodepool for c in result.nodeclaims} == {"light"}


def test_existing_nodes_and_in_flight_claims_come_first(kit: Any, westus2: Catalog) -> None:
    node = Node("aks-node-1", Resources(3860, 12 * 2**30, 250), Resources(1000, 2**30, 3))
    tainted = Node("aks-node-2", Resources(30000, 64 * 2**30, 250), taints=(Taint("gpu", "NoSchedule"),))
    claim = NodeClaim("general-purpose-abcde", "general-purpose", Resources(1250, 2**30, 6),
                      instance_type="Standard_D4ls_v5", status=NodeClaimStatus.LAUNCHED)
    result = plan(snap(kit, westus2, kit.inflate(10), nodes=(node, tainted), in_flight=(claim,)))
    targets = {p.target for p in result.placements}
    assert targets == {"aks-node-1", "general-purpose-abcde"}
    assert sum(1 for p in result.placements if p.target == "aks-node-1") == 2
    assert result.pods_placed == 10 and not result.unplaced


def test_in_flight_creates_reduce_headroom(kit: Any, westus2: Catalog) -> None:
    claim = NodeClaim("gp-x", "other-pool", Resources(16000), instance_type="Standard_D4ls_v5",
                      status=NodeClaimStatus.PLANNED)
    s = snap(kit, westus2, kit.inflate(10), quota=kit.quota(cores=(20, 14)), in_flight=(claim,))
    assert s.quotas()["cores"].left == 2
    result = plan(s)
    assert result.vcpus <= 2 and result.pods_placed == 1
    assert "in flight" in result.unplaced[0].reason.message


def test_unavailable_offerings_are_skipped(kit: Any, westus2: Catalog) -> None:
    gone = frozenset(("on-demand", "Standard_D16ls_v5", z) for z in ("1", "2", "3"))
    result = plan(snap(kit, westus2, kit.inflate(10), unavailable=gone), PlanOptions(quota_aware=False))
    assert result.nodeclaims[0].instance_type == "Standard_D16as_v5"
    assert all(o.name != "Standard_D16ls_v5" for o in result.nodeclaims[0].options)
    one_zone = frozenset(("on-demand", "Standard_D16ls_v5", z) for z in ("1", "2"))
    result = plan(snap(kit, westus2, kit.inflate(10), unavailable=one_zone), PlanOptions(quota_aware=False))
    assert result.nodeclaims[0].instance_type == "Standard_D16ls_v5" and result.nodeclaims[0].zone == "westus2-3"


def test_options_are_capped(kit: Any, westus2: Catalog) -> None:
    result = plan(snap(kit, westus2, kit.inflate(1), NodePool("default")), PlanOptions(max_options=5))
    assert all(len(c.options) == 5 for c in result.nodeclaims)


def test_higher_priority_pods_get_scarce_quota_first(kit: Any, westus2: Catalog) -> None:
    low = kit.inflate(6, prefix="low")
    high = kit.inflate(6, prefix="high", priority=1000)
    result = plan(snap(kit, westus2, low + high, quota=kit.quota(cores=(6, 0))))
    placed = [p for c in result.nodeclaims for p in c.pods]
    assert len(placed) == 4 and all(p.startswith("default/high") for p in placed)


def test_shuffled_input_gives_the_same_plan(kit: Any, westus2: Catalog) -> None:
    pods = kit.inflate(7) + tuple(Pod("web", f"web-{i}", Resources(2500, 3 * 2**30)) for i in range(5))
    pods += tuple(Pod("db", f"db-{i}", Resources(500, 8 * 2**30), node_selector={ZONE: "westus2-1"}) for i in range(3))
    base = plan(snap(kit, westus2, pods, quota=kit.quota(cores=(40, 10))))
    rng = random.Random(7)
    for _ in range(3):
        shuffled = list(pods)
        rng.shuffle(shuffled)
        assert plan(snap(kit, westus2, tuple(shuffled), quota=kit.quota(cores=(40, 10)))).to_dict() == base.to_dict()


def test_daemonset_overhead_follows_taints_and_selectors(kit: Any) -> None:
    everywhere = Pod("kube-system", "kube-proxy", Resources(100, 2**20), owner_kind="DaemonSet",
                     tolerations=(Toleration(operator="Exists"),))
    picky = Pod("kube-system", "gpu-driver", Resources(50), owner_kind="DaemonSet",
                node_selector={"karpenter.azure.com/sku-family": "N"})
    shy = Pod("kube-system", "logs", Resources(10), owner_kind="DaemonSet")
    pool = kit.general_purpose(taints=(Taint("dedicated", "NoSchedule"),))
    assert daemonset_overhead([everywhere, picky, shy], pool) == Resources(100, 2**20, 1)
    assert daemonset_overhead([everywhere, picky, shy], kit.general_purpose()) == Resources(110, 2**20, 2)


def test_bound_and_daemonset_pods_are_not_planned(kit: Any, westus2: Catalog) -> None:
    pods = (Pod("default", "bound", Resources(1000), node_name="n1"),
            Pod("kube-system", "ds", Resources(1000), owner_kind="DaemonSet"))
    result = plan(snap(kit, westus2, pods))
    assert not result.nodeclaims and not result.unplaced and not result.placements


def test_no_nodepool_is_a_reason(kit: Any, westus2: Catalog) -> None:
    result = plan(Snapshot(kit.inflate(1), (), westus2))
    assert result.unplaced[0].reason.code == ReasonCode.NO_NODEPOOL


def test_later_groups_fill_room_left_on_new_nodes(kit: Any, westus2: Catalog) -> None:
    big = (Pod("default", "big", Resources(3000, 2**30), priority=10),)
    small = (Pod("default", "small", Resources(500, 2**28), node_selector={"kubernetes.io/arch": "amd64"}),)
    result = plan(snap(kit, westus2, big + small))
    assert len(result.nodeclaims) == 1
    claim = result.nodeclaims[0]
    assert set(claim.pods) == {"default/big", "default/small"}
    assert claim.requests == Resources(3500, 2**30 + 2**28, 2) + kit.OVERHEAD
    zoned = (Pod("default", "zoned", Resources(500, 2**28), node_selector={ZONE: "westus2-1"}),)
    result = plan(snap(kit, westus2, big + zoned))
    assert len(result.nodeclaims) == 2  # the first claim may launch in any zone: no sharing
