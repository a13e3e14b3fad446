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
    "SEVERITY_RANK",
    "WARNING",
    "Alternative",
    "Evidence",
    "Finding",
    "Fix",
    "InputStats",
    "LiveQuota",
    "PodRequests",
    "QuotaFigures",
    "Report",
]

BLOCKING = "blocking"
WARNING = "warning"
INFO = "info"
SEVERITIES = (BLOCKING, WARNING, INFO)
SEVERITY_RANK = {BLOCKING: 0, WARNING: 1, INFO: 2}

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
    role: str = ""  # what the line shows: error, pods, nodeclaim, instance-type, success …
    text: str = ""  # the line's text (the error lines' and unparsed lines' raw text), may be cut


@dataclass(frozen=True, slots=True)
class Fix:
    """One way out. ``kind``: quota-request | nodepool-change | retry | permission | config | investigate."""

    kind: str
    summary: str  # one sentence a person can act on
    command: str = ""  # the exact command (az …, kubectl …) or a YAML snippet, when there is one
    check: str = ""  # a read-only command that shows the figures before and after


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


@dataclass(frozen=True, slots=True)
class PodRequests:
    """What one pending pod asks for, and the per-node DaemonSet overhead, with how it was derived."""

    cpu_m: int
    memory: int
    overhead_cpu_m: int
    overhead_memory: int
    overhead_pods: int
    derivation: str


@dataclass(frozen=True, slots=True)
class Alternative:
    """One instance type that fits today's headroom, and how many pending pods it would hold."""

    instance_type: str
    vcpus: int
    nodes: int  # how many such nodes fit in the headroom
    pods_per_node: int
    pods: int  # pending pods those nodes would hold
    source: str = "catalog"  # catalog | name (figures derived from the size name only)
    price_per_hour: float | None = None  # on-demand, from the catalog


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
    workloads: list[str] = field(default_factory=list)  # "Deployment default/inflate" when inferable
    zones: list[str] = field(default_factory=list)
    capacity_types: list[str] = field(default_factory=list)
    resolved: bool = False  # the affected pods or claims got a node after the last error
    resolved_at: datetime | None = None
    pending_pods: list[str] = field(default_factory=list)  # named pods still without a node
    per_pod: PodRequests | None = None
    alternatives: list[Alternative] = field(default_factory=list)
    evidence_total: int = 0  # evidence lines before the list was cut
    resources: list[str] = field(default_factory=list)  # cloud resources named by the errors (type/name in group)


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
    blank: int = 0  # whitespace-only lines: lines == parsed + repaired + unparsed + blank


@dataclass(slots=True)
class Report:
    input: InputStats
    findings: list[Finding]
    generated_at: datetime
    notes: list[str] = field(default_factory=list)  # e.g. "quota figures from the log, logged at …"
    filters: dict[str, list[str]] = field(default_factory=dict)  # the filters applied, as given
    hidden: int = 0  # findings left out by the pod/nodepool/nodeclaim/category filters
    quota_source: str = "log"  # log | snapshot | azure

    @property
    def blocking(self) -> bool:
        return any(f.severity == BLOCKING for f in self.findings)
