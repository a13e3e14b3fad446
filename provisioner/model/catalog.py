"""The catalog of VM sizes one region offers, with prices.

A ``Catalog`` is a region's list of ``InstanceType`` values built from resource-SKU API
entries (the JSON shape ``GET …/providers/Microsoft.Compute/skus`` returns) plus an
on-demand and a spot hourly price per size. Two sources feed it:

- the bundled snapshots ``fixtures/skus/<region>.json`` (``load_catalog``), written by
  ``scripts/gen_catalog.py``: each entry is a resource-SKU object with an extra
  ``prices: {"onDemand": x, "spot": y}``; the ARM emulator serves the same file;
- live SKU lists from the Azure adapter (``catalog_from_skus``).

Sizes without an on-demand price are left out: the planner could not rank them.
Restrictions ``NotAvailableForSubscription`` (or ``QuotaId``) are kept on the type:
a ``Location`` restriction sets ``not_available``; a ``Zone`` one lists the zones in
``restricted_zones`` and marks those offerings unavailable.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from provisioner.model.errors import InputError
from provisioner.model.instance_type import InstanceType, Offering, quota_family_name

__all__ = [
    "CATALOG_DIR_ENV",
    "Catalog",
    "bundled_regions",
    "catalog_dir",
    "catalog_from_skus",
    "load_catalog",
]

CATALOG_DIR_ENV = "KARP_CATALOG_DIR"
_ARCH = {"x64": "amd64", "arm64": "arm64"}


@dataclass(frozen=True, slots=True)
class Catalog:
    region: str
    types: tuple[InstanceType, ...]
    read_at: str | None
    source: str
    _by_name: dict[str, InstanceType] = field(init=False, repr=False, compare=False)
    _by_letter: dict[str, tuple[InstanceType, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name: dict[str, InstanceType] = {}
        by_letter: dict[str, list[InstanceType]] = {}
        for it in self.types:
            by_name.setdefault(it.name.lower(), it)
            by_letter.setdefault(it.sku_family, []).append(it)
        object.__setattr__(self, "_by_name", by_name)
        object.__setattr__(self, "_by_letter", {k: tuple(v) for k, v in by_letter.items()})

    def __len__(self) -> int:
        return len(self.types)

    def get(self, name: str) -> InstanceType | None:
        """The size named ``name`` (``Standard_D16ls_v5``; case-insensitive), or None."""
        return self._by_name.get(name.strip().lower())

    def by_family(self, sku_family: str) -> list[InstanceType]:
        """Every size of a SKU family: ``"D"`` gives every D-series size (Dv2 … Dv6, DS, Dpsv5).

        A quota family name (``standardDLSv5Family``) selects that quota family instead.
        """
        if sku_family.startswith("standard"):
            return [it for it in self.types if it.family.lower() == sku_family.lower()]
        return list(self._by_letter.get(sku_family.upper(), ()))

    def cheapest_first(self, capacity_type: str = "on-demand") -> list[InstanceType]:
        """Sizes buyable with ``capacity_type``, cheapest first (ties: fewer vCPUs, then name)."""

        def key(it: InstanceType) -> tuple[float, int, str]:
            price = it.price(capacity_type)
            return (price if price is not None else math.inf, it.vcpus, it.name)

        return sorted((it for it in self.types if it.price(capacity_type) is not None), key=key)


def _capabilities(sku: dict[str, Any]) -> dict[str, str]:
    return {str(c.get("name")): str(c.get("value")) for c in sku.get("capabilities") or [] if isinstance(c, dict)}


def _true(value: str | None, default: bool) -> bool:
    if value is None:
        return default
    return value.strip().lower() == "true"


def _location_info(sku: dict[str, Any], region: str) -> dict[str, Any] | None:
    for info in sku.get("locationInfo") or []:
        if isinstance(info, dict) and str(info.get("location", "")).lower() == region.lower():
            return info
    locations = [str(x).lower() for x in sku.get("locations") or []]
    return {"location": region, "zones": []} if region.lower() in locations else None


def _restrictions(sku: dict[str, Any], region: str) -> tuple[bool, tuple[str, ...]]:
    """(whole region restricted, restricted zones) for ``region``."""
    whole = False
    zones: set[str] = set()
    for r in sku.get("restrictions") or []:
        if not isinstance(r, dict):
            continue
        info = r.get("restrictionInfo") or {}
        locations = [str(x).lower() for x in (info.get("locations") or r.get("values") or [])]
        if locations and region.lower() not in locations:
            continue
        if r.get("type") == "Location":
            whole = True
        elif r.get("type") == "Zone":
            zones.update(str(z) for z in info.get("zones") or [])
    return whole, tuple(sorted(zones))


def _instance_type(sku: dict[str, Any], region: str, price: tuple[float, float | None]) -> InstanceType | None:
    if sku.get("resourceType", "virtualMachines") != "virtualMachines":
        return None
    info = _location_info(sku, region)
    if info is None:
        return None
    name = str(sku["name"])
    caps = _capabilities(sku)
    if "vCPUs" not in caps or "MemoryGB" not in caps:
        raise ValueError(f"size {name} lacks the vCPUs or MemoryGB capability")
    vcpus = int(caps["vCPUs"])
    memory_mib = round(float(caps["MemoryGB"]) * 1024)
    zones = tuple(sorted(str(z) for z in info.get("zones") or []))
    whole, restricted = _restrictions(sku, region)
    on_demand, spot = float(price[0]), (float(price[1]) if price[1] is not None else None)
    if not _true(caps.get("LowPriorityCapable"), True):
        spot = None
    offerings: list[Offering] = []
    for zone in zones or ("",):
        available = not whole and zone not in restricted
        offerings.append(Offering("on-demand", zone, on_demand, available))
        if spot is not None:
            offerings.append(Offering("spot", zone, spot, available))
    return InstanceType(
        name=name,
        vcpus=vcpus,
        memory_mib=memory_mib,
        family=str(sku.get("family") or quota_family_name(name) or ""),
        region=region,
        zones=zones,
        price_on_demand=on_demand,
        price_spot=spot,
        arch=_ARCH.get(caps.get("CpuArchitectureType", "x64").lower(), "amd64"),
        accelerated_networking=_true(caps.get("AcceleratedNetworkingEnabled"), False),
        premium_storage=_true(caps.get("PremiumIO"), False),
        gpu_count=int(caps.get("GPUs", "0") or 0),
        restricted_zones=restricted,
        not_available=whole,
        offerings=tuple(offerings),
    )


def catalog_from_skus(
    region: str,
    skus: list[dict[str, Any]],
    prices: dict[str, tuple[float, float | None]],
    *,
    read_at: str | None = None,
    source: str = "azure",
) -> Catalog:
    """Build a region's catalog from resource-SKU API JSON objects and a price table.

    ``prices`` maps a size name to (on-demand, spot or None) $/hour. SKUs of other
    resource types or other regions, and sizes without a price, are left out. Raises
    ``ValueError`` on an entry that lacks ``name``, ``vCPUs`` or ``MemoryGB``.
    """
    by_name: dict[str, InstanceType] = {}
    for sku in skus:
        if not isinstance(sku, dict) or "name" not in sku:
            raise ValueError("a SKU entry without a name")
        price = prices.get(str(sku["name"]))
        if price is None or price[0] is None:
            continue
        it = _instance_type(sku, region, price)
        if it is not None:
            by_name.setdefault(it.name, it)
    return Catalog(region=region, types=tuple(by_name.values()), read_at=read_at, source=source)


def catalog_dir() -> Path:
    """Where the bundled snapshots live: ``$KARP_CATALOG_DIR`` or ``<repo>/fixtures/skus``."""
    override = os.environ.get(CATALOG_DIR_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2] / "fixtures" / "skus"


def bundled_regions() -> list[str]:
    """Regions with a snapshot in the catalog directory, sorted."""
    directory = catalog_dir()
    if not directory.is_dir():
        return []
    return sorted(p.stem for p in directory.glob("*.json"))


def _prices_of(entries: list[dict[str, Any]]) -> dict[str, tuple[float, float | None]]:
    out: dict[str, tuple[float, float | None]] = {}
    for e in entries:
        prices = e.get("prices")
        if isinstance(prices, dict) and prices.get("onDemand") is not None:
            spot = prices.get("spot")
            out[str(e["name"])] = (float(prices["onDemand"]), float(spot) if spot is not None else None)
    return out


@lru_cache(maxsize=32)
def _load(region: str, path: str, mtime_ns: int) -> Catalog:
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"catalog file {path}: cannot read it ({e})") from e
    except json.JSONDecodeError as e:
        raise InputError(f"catalog file {path}: not valid JSON ({e.msg} at line {e.lineno})") from e
    if isinstance(document, list):
        entries, read_at, source = document, None, path
    elif isinstance(document, dict) and isinstance(document.get("value"), list):
        entries = document["value"]
        read_at = document.get("readAt")
        source = str(document.get("source") or path)
        region = str(document.get("region") or region)
    else:
        raise InputError(f"catalog file {path}: expected a JSON object with a 'value' list of resource SKUs")
    try:
        catalog = catalog_from_skus(region, entries, _prices_of(entries), read_at=read_at, source=source)
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"catalog file {path}: invalid entry ({e})") from e
    if not catalog.types:
        raise InputError(f"catalog file {path}: no priced VM sizes for region {region}")
    return catalog


def load_catalog(region: str = "westus2", path: str | None = None) -> Catalog:
    """The catalog of ``region`` from ``path``, or from the bundled snapshot of that region.

    Results are cached per file (reloaded when the file changes). Raises ``InputError``
    naming the region or the file when there is no snapshot or it cannot be used.
    """
    if path is None:
        file = catalog_dir() / f"{region}.json"
        if not file.is_file():
            known = ", ".join(bundled_regions()) or "none"
            raise InputError(
                f"region {region!r}: no bundled VM-size catalog in {file.parent} (bundled regions: {known})"
            )
    else:
        file = Path(path)
        if not file.is_file():
            raise InputError(f"catalog file {path}: no such file")
    return _load(region, str(file), file.stat().st_mtime_ns)
