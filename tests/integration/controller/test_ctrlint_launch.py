"""Launch orchestration against the ARM emulator through the real Azure SDK clients."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from provisioner.controller.launch import Launcher, LaunchRequest
from provisioner.controller.quota_cache import QuotaCache
from provisioner.controller.unavailable import UnavailableOfferings
from provisioner.model.catalog import load_catalog
from provisioner.observability.logwriter import LogWriter
from sim.arm.faults import FaultRule

CATALOG = load_catalog("westus2")


def _now() -> datetime:
    return datetime.now(UTC)


def _rig(compute: Any) -> tuple[Launcher, UnavailableOfferings, QuotaCache, io.StringIO]:
    out = io.StringIO()
    log = LogWriter(stream=out, level="DEBUG")
    unavailable = UnavailableOfferings()
    quota = QuotaCache(compute.read_quota, timedelta(seconds=60), _now)
    quota.refresh()
    return Launcher(compute, log, unavailable, _now, quota=quota, workers=4), unavailable, quota, out


def _req(arm: Any, size: str, claim: str, capacity: str = "on-demand", zone: str = "") -> LaunchRequest:
    it = CATALOG.get(size)
    assert it is not None
    return LaunchRequest(claim, "general-purpose", it, capacity, zone,
                         "/CommunityGalleries/AKSUbuntu/images/2204gen2containerd/versions/202611.20.0",
                         arm.endpoint.subnet_id, "karpenter")


def test_ctrlint_launch_and_regional_quota_refusal(arm_factory: Any) -> None:
    arm, compute = arm_factory(quotas={"cores": 20}, usages={"cores": 14})
    launcher, unavailable, quota, out = _rig(compute)
    assert quota.headroom("standardDLSv5Family", spot=False) == 6
    ok = launcher.submit(_req(arm, "Standard_D4ls_v5", "general-purpose-aaaaa")).result(timeout=30)
    assert ok.ok, ok.error
    assert set(arm.vms) == {"aks-general-purpose-aaaaa"} and set(arm.nics) == {"aks-general-purpose-aaaaa"}
    assert quota.headroom("standardDLSv5Family", spot=False) == 2  # re-read after the create
    refused = launcher.submit(_req(arm, "Standard_D16ls_v5", "general-purpose-bbbbb")).result(timeout=30)
    assert refused.reason == "SubscriptionQuotaReached"
    assert set(arm.vms) == {"aks-general-purpose-aaaaa"} and set(arm.nics) == {"aks-general-purpose-aaaaa"}
    d16 = CATALOG.get("Standard_D16ls_v5")
    assert d16 is not None and unavailable.is_unavailable(d16, "on-demand", "", _now())
    failed = next(json.loads(x) for x in out.getvalue().splitlines() if '"nodeclaim.launch_failed"' in x)
    assert failed["quota"]["limit"] == 20 and failed["quota"]["usage"] == 18 and failed["quota"]["required"] == 16
    # a retry of the first claim adopts its VM instead of creating another
    again = launcher.submit(_req(arm, "Standard_D4ls_v5", "general-purpose-aaaaa")).result(timeout=30)
    assert again.adopted and len(arm.vms) == 1
    launcher.shutdown()


def test_ctrlint_spot_quota_and_sku_and_zonal_failures(arm_factory: Any) -> None:
    arm, compute = arm_factory(
        quotas={"cores": 100, "lowPriorityCores": 4},
        faults=[FaultRule("sku_not_available", op="create_vm", sku="Standard_D8s_v5"),
                FaultRule("zonal_allocation_failed", op="create_vm", sku="Standard_D4s_v5", zone="2")],
    )
    launcher, unavailable, _, _ = _rig(compute)
    spot = launcher.submit(_req(arm, "Standard_D8ls_v5", "np-spot1", capacity="spot", zone="1")).result(timeout=30)
    assert spot.reason == "SubscriptionQuotaReached"
    d8ls = CATALOG.get("Standard_D8ls_v5")
    assert d8ls is not None
    assert unavailable.is_unavailable(d8ls, "spot", "3", _now())
    assert not unavailable.is_unavailable(d8ls, "on-demand", "3", _now())
    sku = launcher.submit(_req(arm, "Standard_D8s_v5", "np-sku01", zone="1")).result(timeout=30)
    assert sku.reason == "SKUNotAvailable"
    zonal = launcher.submit(_req(arm, "Standard_D4s_v5", "np-zone2", zone="2")).result(timeout=30)
    assert zonal.reason == "ZonalAllocationFailure"
    d4s = CATALOG.get("Standard_D4s_v5")
    assert d4s is not None and unavailable.is_unavailable(d4s, "on-demand", "2", _now())
    assert not unavailable.is_unavailable(d4s, "on-demand", "1", _now())
    assert arm.vms == {} and arm.nics == {}  # nothing leaked
    launcher.shutdown()
