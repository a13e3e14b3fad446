"""Liveness: a NodeClaim that does not make progress in time is given up.

Two clocks, as in Karpenter:

- *launch timeout* (5 min by default): the claim was created but ``Launched`` is not
  ``True`` (the VM create never ended, or a restart left it half-done);
- *registration timeout* (15 min by default): ``Launched=True`` but no Node with the
  claim's ``providerID`` registered (the VM booted badly, or never joined).

A timed-out claim is deleted together with its VM and NIC, and its NodePool gets
``NodeRegistrationHealthy=False`` with the reason (``LaunchTimeout`` /
``RegistrationTimeout``) and a message naming the claim. ``expired_claims`` is pure: it
takes the claims and ``now`` and returns what to give up.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from provisioner.controller.fleet import ClaimInfo, parse_time

__all__ = ["LAUNCH_TIMEOUT", "REGISTRATION_TIMEOUT", "Expired", "LivenessConfig", "expired_claims", "started_at"]

LAUNCH_TIMEOUT = "LaunchTimeout"
REGISTRATION_TIMEOUT = "RegistrationTimeout"


@dataclass(frozen=True, slots=True)
class LivenessConfig:
    launch_timeout: timedelta = timedelta(minutes=5)
    registration_timeout: timedelta = timedelta(minutes=15)


@dataclass(frozen=True, slots=True)
class Expired:
    claim: str
    nodepool: str
    reason: str  # LaunchTimeout | RegistrationTimeout
    age: timedelta
    node: str = ""

    @property
    def event(self) -> str:
        """The log vocabulary key."""
        return "nodeclaim.launch_timeout" if self.reason == LAUNCH_TIMEOUT else "nodeclaim.registration_timeout"

    @property
    def message(self) -> str:
        what = "launch" if self.reason == LAUNCH_TIMEOUT else "registration"
        return (f"NodeClaim {self.claim} did not complete {what} within {_minutes(self.age)}; "
                f"it was deleted with its VM")


def _minutes(age: timedelta) -> str:
    seconds = int(age.total_seconds())
    return f"{seconds // 60}m{seconds % 60:02d}s"


def _condition_time(info: ClaimInfo, type_: str) -> datetime | None:
    for c in info.record.conditions:
        if c.get("type") == type_:
            return parse_time(c.get("lastTransitionTime"))
    return None


def started_at(info: ClaimInfo) -> datetime | None:
    """When the claim was created: its creationTimestamp, else when its Launched condition was first set."""
    return info.created_at or _condition_time(info, "Launched")


def expired_claims(claims: Iterable[ClaimInfo], now: datetime, config: LivenessConfig) -> list[Expired]:
    """The claims whose launch or registration has taken longer than allowed (deleting ones excluded)."""
    out: list[Expired] = []
    for info in claims:
        record = info.record
        if record.deleting:
            continue
        launched = record.status_of("Launched")
        if launched != "True":
            if launched == "False":
                continue  # a failed launch is deleted by the lifecycle (or recovery after a restart)
            start = started_at(info)
            if start is not None and now - start >= config.launch_timeout:
                out.append(Expired(record.name, record.nodepool, LAUNCH_TIMEOUT, now - start))
            continue
        if record.status_of("Registered") == "True":
            continue
        start = record.launched_at or _condition_time(info, "Launched") or started_at(info)
        if start is not None and now - start >= config.registration_timeout:
            out.append(Expired(record.name, record.nodepool, REGISTRATION_TIMEOUT, now - start, record.node_name))
    return out
