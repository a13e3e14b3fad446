"""The bundled VM-size catalog: content, lookups, ordering, loading and SKU-JSON parsing."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from provisioner.model.allocatable import allocatable
from provisioner.model.catalog import (
    CATALOG_DIR_ENV,
    Catalog,
    bundled_regions,
    catalog_dir,
    catalog_from_skus,
    load_catalog,
)
from provisioner.model.errors import InputError
from provisioner.model.instance_type import quota_family_name
from provisioner.model.resources import Resources

REPO = Path(__file__).resolve().parents[3]
SEED_REQUESTS = {"cpu": "10250m", "memory": "2981280Ki", "pods": "15"}


@pytest.fixture(scope="module")
def westus2() -> Catalog:
    return load_catalog("westus2")


def _raw(region: str) -> list[dict[str, Any]]:
    document = json.loads((REPO / "fixtures" / "skus" / f"{region}.json").read_text())
    entries: list[dict[str, Any]] = document["value"]
    return entries


def _seed_candidates(catalog: Catalog) -> list[Any]:
    need = Resources.from_requests(SEED_REQUESTS)
    return [
        it
        for it in catalog.by_family("D")
        if it.arch == "amd64" and it.price_on_demand > 0 and need.fits(allocatable(it))
    ]


# --- content -----------------------------------------------------------------------------


def test_bundled_regions_include_westus2_and_eastus() -> None:
    assert {"westus2", "eastus"} <= set(bundled_regions())


@pytest.mark.parametrize("region", ["westus2", "eastus"])
def test_each_region_has_at_least_300_priced_sizes_of_d_e_f_b(region: str) -> None:
    catalog = load_catalog(region)
    assert len(catalog) >= 300
    assert {it.sku_family for it in catalog.types} == {"B", "D", "E", "F"}
    for it in catalog.types:
        assert it.vcpus > 0 and it.memory_mib > 0, it.name
        assert it.price_on_demand > 0, it.name
        assert it.family, it.name
        assert it.region == region


def test_real_sizes_have_their_published_figures(westus2: Catalog) -> None:
    expected = {
        "Standard_D14_v2": (16, 112 * 1024),
        "Standard_D15_v2": (20, 140 * 1024),
        "Standard_D1_v2": (1, 3584),
        "Standard_DS11_v2": (2, 14 * 1024),
        "Standard_D16ls_v5": (16, 32 * 1024),
        "Standard_D2s_v5": (2, 8 * 1024),
        "Standard_D64ps_v5": (64, 208 * 1024),
        "Standard_E64_v3": (64, 432 * 1024),
        "Standard_E104s_v5": (104, 672 * 1024),
        "Standard_F72s_v2": (72, 144 * 1024),
        "Standard_B1ls": (1, 512),
        "Standard_B20ms": (20, 80 * 1024),
        "Standard_B2ts_v2": (2, 1024),
        "Standard_B16pls_v2": (16, 32 * 1024),
        "Standard_D192s_v6": (192, 768 * 1024),
    }
    for name, (vcpus, mib) in expected.items():
        it = westus2.get(name)
        assert it is not None, name
        assert (it.vcpus, it.memory_mib) == (vcpus, mib), name


def test_quota_families_are_the_usage_api_names(westus2: Catalog) -> None:
    families = {it.family for it in westus2.types}
    for name in (
        "standardDv2Family", "standardDSv2Family", "standardDSv3Family", "standardDDSv4Family",
        "standardDASv5Family", "standardDLSv5Family", "standardDPSv5Family", "standardFSv2Family",
        "standardBSFamily", "standardBsv2Family", "standardBasv2Family", "standardBpsv2Family",
        "standardESv5Family", "StandardDsv6Family", "standardDalv6Family",
    ):
        assert name in families, name
    assert westus2.get("Standard_D16ls_v5").family == "standardDLSv5Family"  # type: ignore[union-attr]
    assert westus2.get("Standard_D14_v2").family == "standardDv2Family"  # type: ignore[union-attr]


@pytest.mark.parametrize("region", ["westus2", "eastus"])
def test_name_derived_quota_family_agrees_with_the_catalog_for_every_size(region: str) -> None:
    mismatched = [(it.name, it.family) for it in load_catalog(region).types if quota_family_name(it.name) != it.family]
    assert mismatched == []


def test_prices_are_realistic_and_linear_within_a_series(westus2: Catalog) -> None:
    def price(name: str) -> float:
        it = westus2.get(name)
        assert it is not None, name
        return it.price_on_demand

    assert price("Standard_D2s_v5") == pytest.approx(0.096)
    assert price("Standard_D2ls_v5") == pytest.approx(0.085)
    assert price("Standard_D2as_v5") == pytest.approx(0.086)
    assert price("Standard_F2s_v2") == pytest.approx(0.085)
    assert price("Standard_B2s") == pytest.approx(0.0416)
    assert price("Standard_E2s_v5") == pytest.approx(0.126)
    assert price("Standard_D16ls_v5") == pytest.approx(8 * price("Standard_D2ls_v5"))


def test_spot_is_ten_to_twenty_percent_of_on_demand_and_absent_for_b_series(westus2: Catalog) -> None:
    for it in westus2.types:
        if it.sku_family == "B":
            assert it.price_spot is None, it.name
            continue
        assert it.price_spot is not None, it.name
        assert 0.10 <= it.price_spot / it.price_on_demand <= 0.20, it.name


def test_eastus_is_a_few_percent_cheaper() -> None:
    west, east = load_catalog("westus2"), load_catalog("eastus")
    for it in east.types:
        other = west.get(it.name)
        assert other is not None
        assert 0.9 * other.price_on_demand <= it.price_on_demand < other.price_on_demand, it.name


def test_arm_sizes_are_arm64(westus2: Catalog) -> None:
    arm = {it.name for it in westus2.types if it.arch == "arm64"}
    assert "Standard_D16ps_v5" in arm and "Standard_B2pts_v2" in arm
    assert all("p" in it.sku.features for it in westus2.types if it.arch == "arm64")  # type: ignore[union-attr]
    assert westus2.get("Standard_D16ls_v5").arch == "amd64"  # type: ignore[union-attr]


def test_zones_and_restrictions(westus2: Catalog) -> None:
    d16 = westus2.get("Standard_D16ls_v5")
    assert d16 is not None and d16.zones == ("1", "2", "3") and not d16.restricted_zones and not d16.not_available
    assert any(it.zones != ("1", "2", "3") for it in westus2.types)
    d4as = westus2.get("Standard_D4as_v5")
    assert d4as is not None and d4as.restricted_zones == ("3",)
    unavailable = [o.zone for o in d4as.offerings if not o.available]
    assert unavailable == ["3", "3"]  # on-demand and spot
    whole = westus2.get("Standard_D96as_v4")
    assert whole is not None and whole.not_available
    assert all(not o.available for o in whole.offerings)


def test_offerings_cover_each_zone_and_capacity_type(westus2: Catalog) -> None:
    it = westus2.get("Standard_D2s_v5")
    assert it is not None
    assert {(o.capacity_type, o.zone) for o in it.offerings} == {
        (c, z) for c in ("on-demand", "spot") for z in ("1", "2", "3")
    }
    b = westus2.get("Standard_B2s")
    assert b is not None and {o.capacity_type for o in b.offerings} == {"on-demand"}


# --- lookups -----------------------------------------------------------------------------


def test_get_is_case_insensitive_and_none_when_unknown(westus2: Catalog) -> None:
    assert westus2.get("standard_d16ls_v5") is westus2.get("Standard_D16ls_v5")
    assert westus2.get("Standard_Nope_v9") is None


def test_by_family_letter_and_by_quota_family(westus2: Catalog) -> None:
    d = westus2.by_family("D")
    assert d and all(it.sku_family == "D" for it in d)
    assert {"Standard_D14_v2", "Standard_DS14_v2", "Standard_D16ps_v5"} <= {it.name for it in d}
    assert westus2.by_family("d") == d
    dls = westus2.by_family("standardDLSv5Family")
    assert sorted(it.vcpus for it in dls) == [2, 4, 8, 16, 32, 48, 64, 96]
    assert westus2.by_family("Z") == []


def test_diagnose_question_small_d_sizes_and_pods_each(westus2: Catalog) -> None:
    from provisioner.model.allocatable import pods_that_fit

    pod = Resources.from_requests({"cpu": "1", "memory": "256M"})
    overhead = Resources.from_requests({"cpu": "250m", "memory": "481280Ki", "pods": "5"})
    small = [it for it in westus2.by_family("D") if it.vcpus <= 6]
    assert len(small) > 40
    counts = {it.name: pods_that_fit(it, pod, overhead) for it in small}
    assert counts["Standard_D4ls_v5"] == 3
    assert counts["Standard_D2s_v5"] == 1
    assert counts["Standard_D1_v2"] == 0


def test_cheapest_first_orders_by_price_then_vcpus(westus2: Catalog) -> None:
    ordered = westus2.cheapest_first()
    prices = [it.price_on_demand for it in ordered]
    assert prices == sorted(prices)
    assert ordered[0].name == "Standard_B1ls"
    spot = westus2.cheapest_first("spot")
    assert spot and all(it.price_spot is not None for it in spot)
    assert not any(it.sku_family == "B" for it in spot)
    assert [it.price_spot for it in spot] == sorted(it.price_spot for it in spot)  # type: ignore[type-var]


def test_founding_scenario_cheapest_fitting_d_size_is_d16ls_v5(westus2: Catalog) -> None:
    candidates = _seed_candidates(westus2)
    cheapest = min(candidates, key=lambda it: (it.price_on_demand, it.vcpus))
    assert cheapest.name == "Standard_D16ls_v5"
    assert cheapest.vcpus == 16
    assert all(it.vcpus >= 16 for it in candidates)


def test_founding_scenario_candidate_count() -> None:
    """The 2023 reference saw 78 compatible D sizes; generations 2-5 give 80 here, v6 adds 30."""
    candidates = _seed_candidates(load_catalog("westus2"))
    before_v6 = [it for it in candidates if it.version < 6]
    assert len(before_v6) == 80
    assert len(candidates) == 110


# --- loading -----------------------------------------------------------------------------


def test_load_catalog_is_cached(westus2: Catalog) -> None:
    assert load_catalog("westus2") is westus2
    assert westus2.read_at == "2026-11-29T00:00:00Z"
    assert "bundled" in westus2.source


def test_unknown_region_names_the_region_and_the_known_ones() -> None:
    with pytest.raises(InputError, match=r"region 'mars1'.*westus2"):
        load_catalog("mars1")


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(InputError, match=r"nope\.json"):
        load_catalog(path=str(missing))


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not valid JSON"),
        ('{"value": 3}', "'value' list"),
        (
            '{"value": [{"name": "Standard_X2", "locations": ["westus2"], "capabilities": [], "prices": {"onDemand": 1}}]}',
            "invalid entry",
        ),
        ('{"value": []}', "no priced VM sizes"),
    ],
)
def test_invalid_file_is_an_input_error_naming_the_file(tmp_path: Path, content: str, problem: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(InputError, match=problem) as info:
        load_catalog("westus2", path=str(bad))
    assert str(bad) in str(info.value)


def test_explicit_path_and_reload_on_change(tmp_path: Path) -> None:
    entries = [e for e in _raw("westus2") if e["name"] in ("Standard_D2s_v5", "Standard_D4s_v5")]
    file = tmp_path / "mini.json"
    file.write_text(json.dumps({"region": "westus2", "value": entries}))
    first = load_catalog("westus2", path=str(file))
    assert [it.name for it in first.cheapest_first()] == ["Standard_D2s_v5", "Standard_D4s_v5"]
    mtime = file.stat().st_mtime_ns
    file.write_text(json.dumps({"region": "westus2", "value": entries[:1], "readAt": "later"}))
    os.utime(file, ns=(mtime + 10**9, mtime + 10**9))  # a distinct mtime even on coarse clocks
    second = load_catalog("westus2", path=str(file))
    assert len(second) == 1 and second.read_at == "later"


def test_a_bare_list_file_is_accepted(tmp_path: Path) -> None:
    entries = [e for e in _raw("eastus") if e["name"] == "Standard_B2s"]
    file = tmp_path / "list.json"
    file.write_text(json.dumps(entries))
    catalog = load_catalog("eastus", path=str(file))
    assert catalog.get("Standard_B2s") is not None and catalog.read_at is None


def test_catalog_dir_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [e for e in _raw("westus2") if e["name"] == "Standard_D2s_v5"]
    (tmp_path / "westus2.json").write_text(json.dumps({"region": "westus2", "value": entries}))
    monkeypatch.setenv(CATALOG_DIR_ENV, str(tmp_path))
    assert catalog_dir() == tmp_path
    assert bundled_regions() == ["westus2"]
    assert len(load_catalog("westus2")) == 1
    monkeypatch.setenv(CATALOG_DIR_ENV, str(tmp_path / "absent"))
    assert bundled_regions() == []


def test_default_directory_is_the_repository_fixtures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CATALOG_DIR_ENV, raising=False)
    assert catalog_dir() == REPO / "fixtures" / "skus"


# --- catalog_from_skus (the live-API path) --------------------------------------------------


def test_catalog_from_skus_uses_prices_and_drops_unpriced_and_foreign_entries() -> None:
    entries = copy.deepcopy([e for e in _raw("westus2") if e["name"] in ("Standard_D2s_v5", "Standard_D4s_v5")])
    for e in entries:
        e.pop("prices")
    entries.append({"resourceType": "disks", "name": "Premium_LRS", "locations": ["westus2"]})
    other = copy.deepcopy(entries[0])
    other["name"] = "Standard_D8s_v5"
    other["locations"] = ["eastus"]
    other["locationInfo"] = [{"location": "eastus", "zones": ["1"]}]
    entries.append(other)
    catalog = catalog_from_skus(
        "westus2",
        entries,
        {"Standard_D2s_v5": (0.1, 0.01), "Standard_D8s_v5": (0.4, None), "Premium_LRS": (1.0, None)},
    )
    assert [it.name for it in catalog.types] == ["Standard_D2s_v5"]
    it = catalog.types[0]
    assert (it.price_on_demand, it.price_spot) == (0.1, 0.01)
    assert catalog.source == "azure" and catalog.region == "westus2"


def test_catalog_from_skus_reads_capabilities_and_restrictions() -> None:
    sku = {
        "resourceType": "virtualMachines",
        "name": "Standard_D4ps_v5",
        "family": "standardDPSv5Family",
        "locations": ["WestUS2"],
        "locationInfo": [{"location": "WestUS2", "zones": ["3", "1"]}],
        "capabilities": [
            {"name": "vCPUs", "value": "4"},
            {"name": "MemoryGB", "value": "16"},
            {"name": "CpuArchitectureType", "value": "Arm64"},
            {"name": "LowPriorityCapable", "value": "False"},
            {"name": "AcceleratedNetworkingEnabled", "value": "True"},
            {"name": "PremiumIO", "value": "True"},
        ],
        "restrictions": [
            {
                "type": "Zone",
                "values": ["westus2"],
                "restrictionInfo": {"locations": ["westus2"], "zones": ["1"]},
                "reasonCode": "NotAvailableForSubscription",
            },
            {"type": "Location", "values": ["eastus"], "restrictionInfo": {"locations": ["eastus"]}},
        ],
    }
    catalog = catalog_from_skus("westus2", [sku], {"Standard_D4ps_v5": (0.154, 0.02)})
    it = catalog.get("Standard_D4ps_v5")
    assert it is not None
    assert (it.vcpus, it.memory_mib, it.arch) == (4, 16384, "arm64")
    assert it.zones == ("1", "3") and it.restricted_zones == ("1",) and not it.not_available
    assert it.price_spot is None  # not LowPriorityCapable
    assert it.accelerated_networking and it.premium_storage
    assert {(o.zone, o.available) for o in it.offerings} == {("1", False), ("3", True)}


def test_catalog_from_skus_regional_size_without_zones_has_one_regional_offering() -> None:
    sku = {
        "name": "Standard_D2s_v5",
        "locations": ["westus2"],
        "capabilities": [{"name": "vCPUs", "value": "2"}, {"name": "MemoryGB", "value": "8"}],
    }
    it = catalog_from_skus("westus2", [sku], {"Standard_D2s_v5": (0.096, 0.01)}).types[0]
    assert it.zones == ()
    assert {(o.capacity_type, o.zone) for o in it.offerings} == {("on-demand", ""), ("spot", "")}
    assert it.family == "standardDSv5Family"  # derived from the name when the entry has none


def test_catalog_from_skus_rejects_entries_without_figures() -> None:
    with pytest.raises(ValueError, match="Standard_D2s_v5"):
        catalog_from_skus("westus2", [{"name": "Standard_D2s_v5", "locations": ["westus2"]}], {"Standard_D2s_v5": (1, None)})
    with pytest.raises(ValueError, match="without a name"):
        catalog_from_skus("westus2", [{"locations": ["westus2"]}], {})


# --- the generator ---------------------------------------------------------------------------


def test_committed_snapshots_match_the_generator() -> None:
    spec = importlib.util.spec_from_file_location("gen_catalog", REPO / "scripts" / "gen_catalog.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_catalog"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["gen_catalog"]
    for region in module.REGIONS:
        committed = (REPO / "fixtures" / "skus" / f"{region.name}.json").read_text()
        assert committed == module.render(region), f"{region.name}.json is stale: run scripts/gen_catalog.py"


def test_snapshot_entries_have_the_arm_sku_shape() -> None:
    for e in _raw("westus2"):
        assert {"resourceType", "name", "tier", "size", "family", "locations", "locationInfo", "capabilities",
                "restrictions", "prices"} <= set(e)
        caps = {c["name"]: c["value"] for c in e["capabilities"]}
        assert {"vCPUs", "MemoryGB", "LowPriorityCapable", "AcceleratedNetworkingEnabled", "PremiumIO",
                "CpuArchitectureType", "HyperVGenerations"} <= set(caps)
        assert all(isinstance(v, str) for v in caps.values())
        assert caps["CpuArchitectureType"] in ("x64", "Arm64")
        assert e["size"] == e["name"].removeprefix("Standard_")
