"""The VM sizes the emulator knows: raw resource-SKU records plus the facts quota needs.

The raw records (Azure's ``resourceSkus`` shape, without the catalog's extra ``prices``)
are served as they are by the SKU listing; quota accounting needs only each size's vCPUs, its quota family, its zones and
its restrictions, read once here. The records come from the catalog fixture
``fixtures/skus/<location>.json`` (``provisioner.model.catalog.catalog_dir()``: a list, or an
object with a ``value`` list) or are handed in by a test. Sizes without a price, which the
planner's catalog leaves out, are still known here: Azure sells them all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from provisioner.model.catalog import catalog_dir
from provisioner.model.instance_type import quota_family_name

__all__ = ["SkuFacts", "SkuTable", "load_sku_fixture"]


@dataclass(frozen=True, slots=True)
class SkuFacts:
    name: str
    vcpus: int
    family: str
    zones: tuple[str, ...] = ()
    restricted_zones: tuple[str, ...] = ()
    not_available: bool = False  # a Location restriction for this subscription
    low_priority_capable: bool = True


def _capabilities(raw: dict[str, Any]) -> dict[str, str]:
    return {str(c.get("name")): str(c.get("value")) for c in raw.get("capabilities") or [] if isinstance(c, dict)}


def _facts(raw: dict[str, Any], location: str) -> SkuFacts | None:
    name = str(raw.get("name") or "")
    if not name or raw.get("resourceType", "virtualMachines") != "virtualMachines":
        return None
    caps = _capabilities(raw)
    try:
        vcpus = int(float(caps.get("vCPUs", "0")))
    except ValueError:
        vcpus = 0
    if vcpus <= 0:
        return None
    family = str(raw.get("family") or quota_family_name(name) or "")
    zones: list[str] = []
    for info in raw.get("locationInfo") or []:
        if str(info.get("location", location)).lower() == location.lower():
            zones.extend(str(z) for z in info.get("zones") or [])
    restricted: list[str] = []
    not_available = False
    for restriction in raw.get("restrictions") or []:
        info = restriction.get("restrictionInfo") or {}
        if restriction.get("type") == "Location":
            not_available = True
        elif restriction.get("type") == "Zone":
            restricted.extend(str(z) for z in info.get("zones") or [])
    return SkuFacts(
        name=name,
        vcpus=vcpus,
        family=family,
        zones=tuple(sorted(zones)),
        restricted_zones=tuple(sorted(set(restricted))),
        not_available=not_available,
        low_priority_capable=caps.get("LowPriorityCapable", "True").lower() == "true",
    )


class SkuTable:
    """Raw SKU records of one location, indexed by size name (case-insensitive, as Azure)."""

    def __init__(self, location: str, records: list[dict[str, Any]]) -> None:
        self.location = location
        self.records = [
            {k: v for k, v in r.items() if k != "prices"} for r in records if _in_location(r, location)
        ]
        self._facts: dict[str, SkuFacts] = {}
        for record in self.records:
            facts = _facts(record, location)
            if facts is not None:
                self._facts[facts.name.lower()] = facts

    def get(self, size: str) -> SkuFacts | None:
        return self._facts.get(size.lower())

    def families(self) -> set[str]:
        return {f.family for f in self._facts.values() if f.family}

    def __len__(self) -> int:
        return len(self._facts)


def _in_location(record: dict[str, Any], location: str) -> bool:
    locations = [str(x).lower() for x in record.get("locations") or []]
    return not locations or location.lower() in locations


def load_sku_fixture(location: str, directory: Path | None = None) -> list[dict[str, Any]]:
    """The raw SKU records of a location's catalog fixture; ValueError when there is none."""
    directory = directory or catalog_dir()
    path = directory / f"{location}.json"
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        known = sorted(p.stem for p in directory.glob("*.json")) if directory.is_dir() else []
        raise ValueError(
            f"location {location!r}: no SKU catalog at {path} (known locations: {', '.join(known) or 'none'})"
        ) from e
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"SKU catalog {path}: cannot be read ({e})") from e
    if isinstance(data, dict):
        data = data.get("value", data.get("skus", []))
    if not isinstance(data, list):
        raise ValueError(f"SKU catalog {path}: expected a list of SKU records")
    return [r for r in data if isinstance(r, dict)]
