from __future__ import annotations

from datetime import timedelta
from typing import Any

from provisioner.controller.quota_cache import QuotaCache
from provisioner.controller.unavailable import UnavailableOfferings
from provisioner.model.errors import classify

REGIONAL = (
    "Operation could not be completed as it results in exceeding approved Total Regional Cores quota. "
    "Additional details - Deployment Model: Resource Manager, Location: westus2, Current Limit: 20, "
    "Current Usage: 14, Additional Required: 16, (Minimum) New Limit Required: 30. Submit a request for Quota increase"
)
SPOT = (
    "Operation could not be completed as it results in exceeding approved LowPriorityCores quota. Additional details "
    "- Deployment Model: Resource Manager, Location: westus2, Current Limit: 10, Current Usage: 8, Additional "
    "Required: 4, (Minimum) New Limit Required: 12. Submit a request for Quota increase"
)


def test_ctrl_quota_view_counts_in_flight(compute: Any, clock: Any) -> None:
    cache = QuotaCache(compute.read_quota, timedelta(seconds=60), clock)
    assert cache.view() is None
    cache.refresh()
    assert cache.headroom("standardDLSv5Family", spot=False) == 6
    cache.reserve("c1", 4, "standardDLSv5Family", spot=False)
    assert cache.headroom("standardDLSv5Family", spot=False) == 2
    view = cache.view()
    assert view is not None and view.items["cores"].usage == 18
    # the create succeeded: usage now reflects it; the reservation goes only after the re-read
    compute.quota["cores"] = (20, 18)
    cache.settle("c1")
    assert cache.headroom("standardDLSv5Family", spot=False) == 2
    assert cache.in_flight == []


def test_ctrl_quota_refresh_interval(compute: Any, clock: Any) -> None:
    cache = QuotaCache(compute.read_quota, timedelta(seconds=60), clock)
    cache.refresh_if_stale()
    cache.refresh_if_stale()
    assert cache.reads == 1
    clock.advance(61)
    cache.refresh_if_stale()
    assert cache.reads == 2


def test_ctrl_quota_spot_reservation_only_hits_spot(compute: Any, clock: Any) -> None:
    compute.quota["lowPriorityCores"] = (10, 0)
    cache = QuotaCache(compute.read_quota, timedelta(seconds=60), clock)
    cache.refresh()
    cache.reserve("s", 8, "standardDLSv5Family", spot=True)
    assert cache.headroom("standardDLSv5Family", spot=True) == 2
    assert cache.headroom("standardDLSv5Family", spot=False) == 6


def test_ctrl_unavailable_regional_quota_blocks_larger_sizes(clock: Any, instance_type: Any) -> None:
    cache = UnavailableOfferings()
    d16, d4, d8 = instance_type("Standard_D16ls_v5", 16), instance_type("Standard_D4ls_v5", 4), instance_type(
        "Standard_D8ls_v5", 8)
    entry = cache.mark_error(classify("OperationNotAllowed", REGIONAL, 409), d16, "on-demand", "", clock())
    assert entry is not None and entry.scope == "regional" and entry.min_vcpus == 7
    now = clock()
    assert cache.is_unavailable(d16, "on-demand", "1", now)
    assert cache.is_unavailable(d8, "on-demand", "", now)
    assert not cache.is_unavailable(d4, "on-demand", "1", now)
    assert not cache.is_unavailable(d16, "spot", "1", now)
    applied = cache.apply([d16, d4], now)
    assert not any(o.available for o in applied[0].offerings if o.capacity_type == "on-demand")
    assert all(o.available for o in applied[0].offerings if o.capacity_type == "spot")
    assert applied[1] is d4
    clock.advance(601)
    assert not cache.is_unavailable(d16, "on-demand", "1", clock())
    assert cache.entries(clock()) == []


def test_ctrl_unavailable_spot_quota_and_sku(clock: Any, instance_type: Any) -> None:
    cache = UnavailableOfferings()
    d8 = instance_type("Standard_D8s_v5", 8, "standardDSv5Family")
    cache.mark_error(classify("OperationNotAllowed", SPOT, 409), d8, "spot", "1", clock())
    assert cache.is_unavailable(d8, "spot", "2", clock())
    assert not cache.is_unavailable(d8, "on-demand", "2", clock())
    sku = classify("SkuNotAvailable", "The requested VM size for resource 'Following SKUs have failed for Capacity "
                   "Restrictions: Standard_D8s_v5' is currently not available in location 'westus2'.", 409)
    e = cache.mark_error(sku, d8, "on-demand", "2", clock())
    assert e is not None and e.expires - clock() == timedelta(hours=23)
    assert cache.is_unavailable(d8, "on-demand", "2", clock())
    assert not cache.is_unavailable(d8, "on-demand", "1", clock())


def test_ctrl_unavailable_zonal_and_family(clock: Any, instance_type: Any) -> None:
    cache = UnavailableOfferings()
    d4 = instance_type("Standard_D4s_v5", 4, "standardDSv5Family")
    d2 = instance_type("Standard_D2s_v5", 2, "standardDSv5Family")
    e4 = instance_type("Standard_E4s_v5", 4, "standardESv5Family")
    cache.mark_error(classify("ZonalAllocationFailed", "Allocation failed ... in this zone."), d4, "on-demand", "3",
                     clock())
    assert cache.is_unavailable(e4, "on-demand", "3", clock())
    assert not cache.is_unavailable(e4, "on-demand", "1", clock())
    fam = classify("OperationNotAllowed", "Operation could not be completed as it results in exceeding approved "
                   "standardDSv5Family Cores quota. Additional details - Deployment Model: Resource Manager, "
                   "Location: westus2, Current Limit: 10, Current Usage: 8, Additional Required: 4, (Minimum) New "
                   "Limit Required: 12.", 409)
    cache.mark_error(fam, d4, "on-demand", "1", clock())
    assert cache.is_unavailable(d4, "on-demand", "1", clock())
    assert not cache.is_unavailable(d2, "on-demand", "1", clock())
    assert not cache.is_unavailable(e4, "on-demand", "1", clock())
