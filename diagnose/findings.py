"""What karp-diagnose concludes: findings, and the report that carries them.

A finding is one distinct root cause, explained once: category (a fixed vocabulary,
part of the public JSON contract), severity, the affected objects, the numbers, evidence
as file:line references, and fixes. The JSON form is documented in docs/diagnose.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

__all__ = [
    "BLOCKING",
    "CATEGORIES",
    "INFO",
    "SEVERITIES",
    "WARNING",
    "Evidence",
    "Finding",
    "Fix",
    "InputStats",
    "LiveQuota",
    "QuotaFigures",
    "Report",
]

BLOCKING = "blocking"
WARNING = "warning"
INFO = "info"
SEVERITIES = (BLOCKING, WARNING, INFO)

CATEGORIES = (
    "regional-vcpu-quota",
    "family-vcpu-quota",
    "spot-vcpu-quota",
    "sku-not-available",
    "allocation-failed",
    "zonal-allocation-failed",
    "overconstrained-allocation",
    "subnet-full",
    "public-ip-limit",
    "nic-reserved",
    "throttled",
    "authorization-failed",
    "image-not-found",
    "invalid-vm-size",
    "no-compatible-instance-types",
    "nodepool-limit",
    "nodeclass-not-ready",
    "launch-failed",
    "registration-timeout",
    "insufficient-capacity",
    "unknown-error",
)


@dataclass(frozen=True, slots=True)
class Evidence:
    file: str
    line: int


@dataclass(frozen=True, slots=True)
class Fix:
    """One way out. ``kind``: quota-request | nodepool-change | retry | permission | config | investigate."""

    kind: str
    summary: str  # one sentence a person can act on
    command: str = ""  # the exact command (az …, kubectl …) or a YAML snippet, when there is one


@dataclass(frozen=True, slots=True)
class LiveQuota:
    limit: int
    usage: int
    read_at: datetime


@dataclass(frozen=True, slots=True)
class QuotaFigures:
    name: str  # cores | lowPriorityCores | standardDLSv5Family …
    scope: str  # regional | family | spot
    limit: int
    usage: int
    required: int
    new_limit: int
    source: str = "log"  # where limit/usage came from: log | azure | snapshot
    read_at: datetime | None = None  # when those figures were logged or read
    live: LiveQuota | None = None  # set by --azure

    @property
    def headroom(self) -> int:
        return max(self.limit - self.usage, 0)


@dataclass(slots=True)
class Finding:
    category: str
    severity: str
    summary: str
    pods: list[str] = field(default_factory=list)  # namespace/name as named in the input
    pod_count: int = 0  # including pods the input only counted ("and 5 other(s)")
    nodeclaims: list[str] = field(default_factory=list)
    nodepool: str = ""
    instance_types: list[str] = field(default_factory=list)
    instance_type_vcpus: dict[str, int] = field(default_factory=dict)
    region: str = ""
    quota: QuotaFigures | None = None
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    occurrences: int = 0
    evidence: list[Evidence] = field(default_factory=list)
    fixes: list[Fix] = field(default_factory=list)
    details: list[str] = field(default_factory=list)  # further lines of explanation
    error_code: str = ""
    error_message: str = ""  # verbatim cloud text (always kept for unknown-error)


@dataclass(frozen=True, slots=True)
class InputStats:
    lines: int
    parsed: int
    repaired: int
    unparsed: int
    files: list[str]
    events: int = 0
    unparsed_refs: list[Evidence] = field(default_factory=list)
    repaired_refs: list[Evidence] = field(default_factory=list)


@dataclass(slots=True)
class Report:
    input: InputStats
    findings: list[Finding]
    generated_at: datetime
    notes: list[str] = field(default_factory=list)  # e.g. "quota figures from the log, logged at …"

    @property
    def blocking(self) -> bool:
        return any(f.severity == BLOCKING for f in self.findings)
