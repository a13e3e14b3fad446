"""The things karp-tui's state holds: pending pods, NodeClaims with their conditions, quota
gauges, log records, and the snapshot a live source reads.

Plain mutable dataclasses (the state folds records into them); ``LogRecord`` is frozen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from diagnose.correlate import owner_of
from provisioner.model.quota import QuotaSnapshot

__all__ = [
    "CONDITIONS",
    "ClaimState",
    "Condition",
    "LogRecord",
    "PendingPod",
    "QuotaGauge",
    "Snapshot",
    "workload_of",
]

CONDITIONS = ("Launched", "Registered", "Initialized")


def workload_of(pod: str) -> str:
    """``default/inflate-74ccd665f4-79x4g`` -> ``Deployment default/inflate``; ``Pod <name>`` when unsure."""
    return owner_of(pod) or f"Pod {pod}"


@dataclass(slots=True)
class PendingPod:
    key: str  # namespace/name
    workload: str
    first_seen: datetime | None = None
    cpu_m: int | None = None
    memory: int | None = None
    scheduler_reason: str = ""
    provisioner_reason: str = ""
    nodeclaim: str = ""
    cause: str = ""  # set when the pod itself is blocked (not through its NodeClaim)


@dataclass(slots=True)
class Condition:
    status: str = "Unknown"  # True | False | Unknown
    reason: str = ""
    since: datetime | None = None


@dataclass(slots=True)
class ClaimState:
    name: str
    nodepool: str = ""
    instance_type: str = ""
    vcpus: int | None = None
    capacity_type: str = ""
    zone: str = ""
    node: str = ""
    created: datetime | None = None
    conditions: dict[str, Condition] = field(default_factory=lambda: {c: Condition() for c in CONDITIONS})
    last_error: str = ""
    last_error_code: str = ""
    category: str = ""  # diagnosis category of the last error
    quota_name: str = ""  # the quota the last error was about
    quota_required: int = 0
    requests_cpu_m: int | None = None
    requests_memory: int | None = None
    requests_pods: int | None = None

    @property
    def blocked(self) -> bool:
        return bool(self.category) and self.conditions["Launched"].status != "True"


@dataclass(slots=True)
class QuotaGauge:
    name: str  # cores | lowPriorityCores | standardDLSv5Family …
    scope: str  # regional | family | spot
    limit: int | None = None
    usage: int | None = None
    read_at: datetime | None = None
    source: str = ""  # log | azure | snapshot


@dataclass(frozen=True, slots=True)
class LogRecord:
    index: int
    file: str
    line: int
    time: datetime | None
    level: str
    component: str
    message: str
    raw: str
    fields: tuple[tuple[str, Any], ...]


@dataclass(slots=True)
class Snapshot:
    """A whole picture read from a live source; ``None`` parts are left as they are."""

    taken_at: datetime
    pods: dict[str, PendingPod] | None = None  # every pending pod (replaces the set)
    claims: dict[str, ClaimState] | None = None
    quota: QuotaSnapshot | None = None
    pod_changes: dict[str, PendingPod | None] | None = None  # only what changed; None: the pod left
