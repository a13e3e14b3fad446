"""Offerings that Azure refused recently, remembered for a while so the next plan avoids them.

An entry blocks a set of offerings (capacity type x instance type x zone) until it
expires. Its scope is one of:

- ``offering``  one size in one zone for one capacity type (SkuNotAvailable, allocation);
- ``zone``      every size in one zone (ZonalAllocationFailed);
- ``family``    every size of one quota family with at least ``min_vcpus`` vCPUs
                (family quota, as Karpenter's Azure provider does);
- ``regional``  every on-demand size with at least ``min_vcpus`` vCPUs (regional quota:
                Karpenter caches nothing here and retries forever; we remember it);
- ``spot``      every spot offering with at least ``min_vcpus`` vCPUs (spot quota).

TTLs follow the provider's table: spot quota 1 h, family quota 10 min (1 h when the
limit is 0), SkuNotAvailable spot 1 h / on-demand 23 h, zonal and allocation failures
1 h; regional quota 10 min. ``mark_error`` maps a typed ``CloudError`` onto an entry.
Time is passed in; the cache is thread-safe.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from provisioner.model.errors import (
    AllocationFailed,
    CloudError,
    OverconstrainedAllocation,
    QuotaExceeded,
    QuotaScope,
    SkuNotAvailable,
    ZonalAllocationFailed,
)
from provisioner.model.instance_type import InstanceType

__all__ = ["TTL", "Unavailable", "UnavailableOfferings"]

TTL = {
    "spot-quota": timedelta(hours=1),
    "family-quota": timedelta(minutes=10),
    "family-quota-zero": timedelta(hours=1),
    "regional-quota": timedelta(minutes=10),
    "sku-spot": timedelta(hours=1),
    "sku-on-demand": timedelta(hours=23),
    "zonal": timedelta(hours=1),
    "allocation": timedelta(hours=1),
}


@dataclass(frozen=True, slots=True)
class Unavailable:
    scope: str  # offering | zone | family | regional | spot
    expires: datetime
    reason: str  # the error code or category that caused it
    instance_type: str = ""
    family: str = ""
    zone: str = ""  # "" = any zone
    capacity_type: str = ""  # "" = any capacity type
    min_vcpus: int = 0

    def blocks(self, it: InstanceType, capacity_type: str, zone: str) -> bool:
        if self.capacity_type and self.capacity_type != capacity_type:
            return False
        if self.zone and zone and self.zone != zone:
            return False
        if self.scope == "offering":
            return it.name == self.instance_type
        if self.scope == "zone":
            return True
        if self.scope == "family":
            return it.family.lower() == self.family.lower() and it.vcpus >= self.min_vcpus
        if self.scope in ("regional", "spot"):
            return it.vcpus >= self.min_vcpus
        return False

    @property
    def key(self) -> str:
        return ":".join(
            [self.scope, self.capacity_type, self.instance_type or self.family, self.zone, str(self.min_vcpus)]
        )


class UnavailableOfferings:
    """``cache_regional=False`` reproduces Karpenter: a regional quota refusal is not remembered."""

    def __init__(self, cache_regional: bool = True) -> None:
        self.cache_regional = cache_regional
        self._entries: dict[str, Unavailable] = {}
        self._lock = threading.Lock()

    def add(self, entry: Unavailable) -> Unavailable:
        with self._lock:
            current = self._entries.get(entry.key)
            if current is None or current.expires < entry.expires:
                self._entries[entry.key] = entry
        return entry

    def entries(self, now: datetime) -> list[Unavailable]:
        with self._lock:
            for key in [k for k, e in self._entries.items() if e.expires <= now]:
                del self._entries[key]
            return list(self._entries.values())

    def is_unavailable(self, it: InstanceType, capacity_type: str, zone: str, now: datetime) -> bool:
        return any(e.blocks(it, capacity_type, zone) for e in self.entries(now))

    def apply(self, catalog: list[InstanceType], now: datetime) -> list[InstanceType]:
        """The catalog with every blocked offering marked ``available=False`` (a frozen copy)."""
        live = self.entries(now)
        if not live:
            return list(catalog)
        out: list[InstanceType] = []
        for it in catalog:
            offerings = tuple(
                replace(o, available=False)
                if o.available and any(e.blocks(it, o.capacity_type, o.zone) for e in live)
                else o
                for o in it.offerings
            )
            out.append(replace(it, offerings=offerings) if offerings != it.offerings else it)
        return out

    def mark_error(
        self, error: CloudError, it: InstanceType, capacity_type: str, zone: str, now: datetime
    ) -> Unavailable | None:
        """Remember what ``error`` says is unavailable; None for errors that say nothing about offerings."""
        entry: Unavailable | None = None
        code = error.code or type(error).__name__
        if isinstance(error, QuotaExceeded):
            # every size larger than what is left in that quota is blocked
            threshold = max(min(error.headroom + 1, it.vcpus), 1)
            if error.scope == QuotaScope.SPOT:
                entry = Unavailable("spot", now + TTL["spot-quota"], code, capacity_type="spot", min_vcpus=threshold)
            elif error.scope == QuotaScope.FAMILY:
                ttl = TTL["family-quota-zero"] if error.limit == 0 else TTL["family-quota"]
                entry = Unavailable(
                    "family", now + ttl, code, family=error.quota or it.family, capacity_type=capacity_type,
                    min_vcpus=threshold,
                )
            elif self.cache_regional:
                entry = Unavailable(
                    "regional", now + TTL["regional-quota"], code, capacity_type="on-demand", min_vcpus=threshold
                )
        elif isinstance(error, SkuNotAvailable):
            ttl = TTL["sku-spot"] if capacity_type == "spot" else TTL["sku-on-demand"]
            entry = Unavailable("offering", now + ttl, code, instance_type=it.name, zone=zone, capacity_type=capacity_type)
        elif isinstance(error, ZonalAllocationFailed):
            entry = Unavailable("zone", now + TTL["zonal"], code, zone=zone or error.zone, capacity_type=capacity_type)
            if not entry.zone:
                entry = replace(entry, scope="offering", instance_type=it.name)
        elif isinstance(error, AllocationFailed | OverconstrainedAllocation):
            entry = Unavailable(
                "offering", now + TTL["allocation"], code, instance_type=it.name, zone=zone, capacity_type=capacity_type
            )
        return self.add(entry) if entry is not None else None

