"""vCPU quota headroom as the controller sees it: the last usages read, minus creates in flight.

The figures come from ``Compute.read_quota()`` (the usages API). They are re-read on an
interval and after every create or delete. Between a create being asked for and the next
read that reflects it, the claim holds a *reservation*: its vCPUs are added to the usage
of every quota the VM counts against (on-demand: the regional total ``cores`` and its
family; spot: ``lowPriorityCores``), so two plans in a row never spend the same headroom.
A reservation is dropped only after a fresh read taken once the create ended, so a view
never counts a VM zero times (it may briefly count it twice, which errs on the safe side).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from provisioner.model.quota import REGIONAL_QUOTA, SPOT_QUOTA, QuotaSnapshot, QuotaUsage

__all__ = ["QuotaCache", "Reservation", "quotas_for"]


@dataclass(frozen=True, slots=True)
class Reservation:
    claim: str
    vcpus: int
    family: str
    spot: bool


def quotas_for(family: str, spot: bool) -> tuple[str, ...]:
    """The usage-API quota names a VM of ``family`` counts against."""
    return (SPOT_QUOTA,) if spot else (REGIONAL_QUOTA, family)


class QuotaCache:
    def __init__(
        self,
        read: Callable[[], QuotaSnapshot],
        interval: timedelta,
        clock: Callable[[], datetime],
        on_refresh: Callable[[QuotaSnapshot], None] | None = None,
    ) -> None:
        self._read = read
        self._on_refresh = on_refresh
        self._interval = interval
        self._clock = clock
        self._lock = threading.RLock()
        self._snapshot: QuotaSnapshot | None = None
        self._read_at: datetime | None = None
        self._reservations: dict[str, Reservation] = {}
        self.reads = 0

    def refresh(self) -> QuotaSnapshot:
        """Read the usages now (raises what ``read`` raises; the last good view is kept)."""
        snapshot = self._read()
        with self._lock:
            self._snapshot = snapshot
            self._read_at = self._clock()
            self.reads += 1
        if self._on_refresh is not None:
            self._on_refresh(snapshot)
        return snapshot

    def refresh_if_stale(self) -> None:
        with self._lock:
            stale = self._read_at is None or self._clock() - self._read_at >= self._interval
        if stale:
            self.refresh()

    def reserve(self, claim: str, vcpus: int, family: str, spot: bool) -> None:
        with self._lock:
            self._reservations[claim] = Reservation(claim, vcpus, family, spot)

    def settle(self, claim: str, refresh: bool = True) -> None:
        """The create for ``claim`` ended (either way): re-read, then drop its reservation."""
        if refresh:
            try:
                self.refresh()
            finally:
                with self._lock:
                    self._reservations.pop(claim, None)
        else:
            with self._lock:
                self._reservations.pop(claim, None)

    @property
    def in_flight(self) -> list[Reservation]:
        with self._lock:
            return list(self._reservations.values())

    def snapshot(self) -> QuotaSnapshot | None:
        """The last read as Azure reported it (no reservations): what the planner budgets from,
        counting in-flight claims itself."""
        with self._lock:
            return self._snapshot

    @property
    def read_at(self) -> datetime | None:
        return self._read_at

    def view(self) -> QuotaSnapshot | None:
        """The last read with in-flight reservations added to usage; None before the first read."""
        with self._lock:
            snapshot = self._snapshot
            reservations = list(self._reservations.values())
        if snapshot is None:
            return None
        items = dict(snapshot.items)
        for res in reservations:
            for name in quotas_for(res.family, res.spot):
                item = _find(items, name)
                if item is not None:
                    items[item.name] = replace(item, usage=item.usage + res.vcpus)
        return replace(snapshot, items=items)

    def headroom(self, family: str, spot: bool) -> int | None:
        """vCPUs a new VM of ``family`` can still take: the smallest headroom of its quotas."""
        view = self.view()
        if view is None:
            return None
        rooms = [item.headroom for name in quotas_for(family, spot) if (item := _find(view.items, name))]
        return min(rooms) if rooms else None


def _find(items: dict[str, QuotaUsage], name: str) -> QuotaUsage | None:
    """Quota names are matched case-insensitively (``standardDLSv5Family`` vs ``standardDLSV5Family``)."""
    item = items.get(name)
    if item is not None:
        return item
    lowered = name.lower()
    for key, value in items.items():
        if key.lower() == lowered:
            return value
    return None
