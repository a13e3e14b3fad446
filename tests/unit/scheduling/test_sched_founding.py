"""The founding scenario: 10 inflate pods, the general-purpose NodePool, 6 vCPUs of regional quota left."""

from __future__ import annotations

from typing import Any

from provisioner.model.allocatable import allocatable
from provisioner.model.catalog import Catalog
from provisioner.model.resources import Resources
from provisioner.scheduling.plan import Plan, ReasonCode
from provisioner.scheduling.snapshot import Snapshot
from provisioner.scheduling.solver import PlanOptions, plan


def _snapshot(kit: Any, catalog: Catalog, with_quota: bool = True) -> Snapshot:
    return Snapshot(
        pods=kit.inflate(10),
        nodepools=(kit.general_purpose(),),
        catalog=catalog,
        quota=kit.quota(cores=(20, 14)) if with_quota else None,
        daemonset_overhead={"general-purpose": kit.OVERHEAD},
        now=kit.NOW,
    )


def test_quota_blind_picks_karpenters_size_for_the_whole_batch(kit: Any, westus2: Catalog) -> None:
    result = plan(_snapshot(kit, westus2), PlanOptions(quota_aware=False))
    assert len(result.nodeclaims) == 1
    claim = result.nodeclaims[0]
    assert claim.instance_type == "Standard_D16ls_v5"
    assert claim.vcpus == 16 and claim.capacity_type == "on-demand" and claim.zone == ""
    assert len(claim.pods) == 10 and not result.unplaced
    # the NodeClaim requests exactly as the founding log printed them
    assert claim.requests.to_requests() == {"cpu": "10250m", "memory": "2981280Ki", "pods": "15"}
    # options: every D size that fits, cheapest first, the chosen one first
    prices = [o.price_per_hour for o in claim.options]
    assert claim.options[0].name == "Standard_D16ls_v5"
    assert prices == sorted(prices)
    assert all(claim.requests.fits(allocatable(westus2.get(o.name))) for o in claim.options)  # type: ignore[arg-type]
    assert all(westus2.get(o.name).sku_family == "D" for o in claim.options)  # type: ignore[union-attr]
    assert 60 <= len(claim.options) <= 600


def test_quota_aware_places_the_most_pods_within_six_vcpus(kit: Any, westus2: Catalog) -> None:
    result = plan(_snapshot(kit, westus2))
    assert result.vcpus <= 6
    # 4 vCPUs hold 3 pods after overhead, 2 vCPUs hold 1: 4 pods is the most 6 vCPUs can place
    assert result.pods_placed == 4
    assert sorted(c.vcpus for c in result.nodeclaims) == [2, 4]
    assert {c.instance_type for c in result.nodeclaims} == {"Standard_D4ls_v5", "Standard_D2ls_v5"}
    assert abs(result.cost_per_hour - 0.255) < 1e-9
    for claim in result.nodeclaims:  # options already filtered to what fits the headroom
        assert all(o.vcpus <= 6 for o in claim.options)
        assert claim.options[0].name == claim.instance_type
    assert len(result.unplaced) == 6
    reason = result.unplaced[0].reason
    assert all(u.reason == reason for u in result.unplaced)
    assert reason.code == ReasonCode.QUOTA_REGIONAL
    assert (reason.quota, reason.limit, reason.usage, reason.left) == ("cores", 20, 14, 6)
    # the 6 pods left need one 8-vCPU node (7 pods fit): limit 14 + 6 planned + 8 = 28
    assert reason.needed == 8 and reason.new_limit == 28
    for text in ("regional", "cores", "20", "14", "need 8 vCPUs", "28"):
        assert text in reason.message


def test_without_quota_the_cheapest_mix_beats_one_big_node(kit: Any, westus2: Catalog) -> None:
    result = plan(_snapshot(kit, westus2, with_quota=False))
    blind = plan(_snapshot(kit, westus2, with_quota=False), PlanOptions(quota_aware=False))
    assert result.pods_placed == 10 and not result.unplaced
    assert result.cost_per_hour < blind.cost_per_hour
    assert sorted(c.instance_type for c in result.nodeclaims) == ["Standard_D4ls_v5", "Standard_D8ls_v5"]


def test_enough_quota_plans_everything_within_it(kit: Any, westus2: Catalog) -> None:
    snap = _snapshot(kit, westus2)
    roomy = Snapshot(snap.pods, snap.nodepools, westus2, quota=kit.quota(cores=(40, 14)),
                     daemonset_overhead=snap.daemonset_overhead)
    result: Plan = plan(roomy)
    assert result.pods_placed == 10 and result.vcpus <= 26


def test_daemonset_overhead_is_reserved_on_every_node(kit: Any, westus2: Catalog) -> None:
    result = plan(_snapshot(kit, westus2, with_quota=False))
    for claim in result.nodeclaims:
        assert claim.requests == kit.INFLATE.times(len(claim.pods)) + kit.OVERHEAD
        it = westus2.get(claim.instance_type)
        assert it is not None and claim.requests.fits(allocatable(it))
    assert Resources(250, 481280 * 1024, 5, 0) == kit.OVERHEAD
