"""vCPU quota bookkeeping: limits, usage, the check Azure makes on a VM create, and raises.

Usage is never stored: it is the preset usage (``--usage``) plus the vCPUs of the VMs the
emulator holds that count (those not ``Failed``). A regular VM counts against the regional
``cores`` quota and its size's family quota; a Spot VM counts only against
``lowPriorityCores``. On create, the checks run family first, then regional (a Spot VM is
checked against ``lowPriorityCores`` alone); the first one violated is reported, as Azure
reports only one.

A limit increase (Microsoft.Quota) becomes a ``QuotaRequest`` that takes effect after a
delay, or is rejected when the new limit is above the ceiling.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sim.arm import messages
from sim.arm.messages import ArmFault

__all__ = [
    "DEFAULT_FAMILY_LIMIT",
    "DEFAULT_REGIONAL_LIMIT",
    "DEFAULT_SPOT_LIMIT",
    "QuotaLedger",
    "QuotaRequest",
    "VcpuCharge",
    "localized_name",
]

DEFAULT_REGIONAL_LIMIT = 350
DEFAULT_FAMILY_LIMIT = 100
DEFAULT_SPOT_LIMIT = 350
REGIONAL = "cores"
SPOT = "lowPriorityCores"


@dataclass(frozen=True, slots=True)
class VcpuCharge:
    """What one VM takes from quota."""

    vcpus: int
    family: str
    spot: bool


@dataclass(slots=True)
class QuotaRequest:
    id: str
    name: str
    new_limit: int
    submitted: datetime
    due: float  # monotonic time when it settles
    state: str = "InProgress"  # InProgress | Succeeded | Failed
    message: str = ""
    sub_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))


_FAMILY_WORDS = re.compile(r"^standard(.+)Family$", re.IGNORECASE)


def localized_name(name: str) -> str:
    """``standardDLSv5Family`` -> ``Standard DLSv5 Family vCPUs``, as the usages API words it."""
    if name == REGIONAL:
        return "Total Regional vCPUs"
    if name == SPOT:
        return "Total Regional Low-priority vCPUs"
    match = _FAMILY_WORDS.match(name)
    return f"Standard {match.group(1)} Family vCPUs" if match else name


class QuotaLedger:
    """Limits and preset usage of one subscription in one location (callers hold the lock)."""

    def __init__(
        self,
        subscription: str,
        location: str,
        families: Iterable[str],
        limits: dict[str, int] | None = None,
        preset_usage: dict[str, int] | None = None,
        ceiling: int | None = None,
        request_delay_s: float = 0.0,
    ) -> None:
        self.subscription = subscription
        self.location = location
        self.limits: dict[str, int] = {REGIONAL: DEFAULT_REGIONAL_LIMIT, SPOT: DEFAULT_SPOT_LIMIT}
        for family in families:
            self.limits[family] = DEFAULT_FAMILY_LIMIT
        self.limits.update(limits or {})
        self.preset_usage: dict[str, int] = dict(preset_usage or {})
        for name in self.preset_usage:
            self.limits.setdefault(name, DEFAULT_FAMILY_LIMIT)
        self.ceiling = ceiling
        self.request_delay_s = request_delay_s
        self.requests: dict[str, QuotaRequest] = {}

    def names(self) -> list[str]:
        """Quota names in the order the usages API lists them: regional, families, spot."""
        families = sorted(n for n in self.limits if n not in (REGIONAL, SPOT))
        return [REGIONAL, *families, SPOT]

    def usage(self, charges: Iterable[VcpuCharge]) -> dict[str, int]:
        totals = {name: self.preset_usage.get(name, 0) for name in self.limits}
        for charge in charges:
            if charge.spot:
                totals[SPOT] = totals.get(SPOT, 0) + charge.vcpus
                continue
            totals[REGIONAL] = totals.get(REGIONAL, 0) + charge.vcpus
            totals[charge.family] = totals.get(charge.family, 0) + charge.vcpus
        return totals

    def check(self, new: VcpuCharge, charges: Iterable[VcpuCharge]) -> None:
        """Raise Azure's 409 for the first quota the new VM would exceed."""
        used = self.usage(charges)
        sub, location, need = self.subscription, self.location, new.vcpus
        if new.spot:
            limit = self.limits.get(SPOT, DEFAULT_SPOT_LIMIT)
            if used.get(SPOT, 0) + need > limit:
                raise messages.spot_quota_exceeded(sub, location, limit, used.get(SPOT, 0), need)
            return
        family_limit = self.limits.get(new.family, DEFAULT_FAMILY_LIMIT)
        if used.get(new.family, 0) + need > family_limit:
            raise messages.family_quota_exceeded(sub, location, new.family, family_limit, used.get(new.family, 0), need)
        limit = self.limits.get(REGIONAL, DEFAULT_REGIONAL_LIMIT)
        if used.get(REGIONAL, 0) + need > limit:
            raise messages.regional_quota_exceeded(sub, location, limit, used.get(REGIONAL, 0), need)

    def request_increase(self, name: str, new_limit: int, now: float) -> QuotaRequest:
        if name not in self.limits:
            raise messages.bad_request("InvalidResourceName", f"The resource name '{name}' is not a known quota in location '{self.location}'.")
        if new_limit < 0:
            raise messages.bad_request("InvalidQuotaLimit", f"The requested limit {new_limit} for '{name}' is not valid.")
        request = QuotaRequest(str(uuid.uuid4()), name, new_limit, datetime.now(UTC), now + self.request_delay_s)
        self.requests[request.id] = request
        return request

    def settle(self, now: float) -> None:
        """Apply or reject every request whose delay has passed."""
        for request in self.requests.values():
            if request.state != "InProgress" or request.due > now:
                continue
            if self.ceiling is not None and request.new_limit > self.ceiling:
                request.state = "Failed"
                request.message = (
                    f"The quota request for {request.name} could not be approved automatically: the requested "
                    f"limit {request.new_limit} is above {self.ceiling}. Create a support request to ask for it."
                )
            else:
                self.limits[request.name] = request.new_limit
                request.state = "Succeeded"
                request.message = "Request processed"

    def rejection(self, request: QuotaRequest) -> ArmFault:
        return ArmFault(400, "QuotaRequestFailed", request.message)
