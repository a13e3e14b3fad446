"""vCPU quota as the usage API reports it: per scope, with when it was read and from where."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from provisioner.model.errors import QuotaScope

__all__ = ["REGIONAL_QUOTA", "SPOT_QUOTA", "QuotaSnapshot", "QuotaUsage", "scope_of"]

REGIONAL_QUOTA = "cores"
SPOT_QUOTA = "lowPriorityCores"


def scope_of(name: str) -> str:
    """``cores`` -> regional, ``lowPriorityCores`` -> spot, ``standard…Family`` -> family."""
    if name == REGIONAL_QUOTA:
        return QuotaScope.REGIONAL
    if name == SPOT_QUOTA:
        return QuotaScope.SPOT
    return QuotaScope.FAMILY


@dataclass(frozen=True, slots=True)
class QuotaUsage:
    name: str  # "cores", "lowPriorityCores", "standardDLSv5Family", …
    limit: int
    usage: int
    localized_name: str = ""

    @property
    def scope(self) -> str:
        return scope_of(self.name)

    @property
    def headroom(self) -> int:
        return max(self.limit - self.usage, 0)


@dataclass(frozen=True, slots=True)
class QuotaSnapshot:
    """Every vCPU quota of one subscription in one region at one moment.

    ``source`` says where the figures came from: ``azure`` (the usages API, live),
    ``log`` (an error message's own numbers), ``snapshot`` (a saved file), ``flags``.
    """

    region: str
    read_at: datetime
    source: str
    items: dict[str, QuotaUsage] = field(default_factory=dict)

    def get(self, name: str) -> QuotaUsage | None:
        return self.items.get(name)

    def headroom(self, name: str) -> int | None:
        item = self.items.get(name)
        return item.headroom if item else None
