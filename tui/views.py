"""Table rows for each pane, computed from a ClusterState at a given "now".

Pure functions: the same state and the same ``now`` give the same rows, which is what
the diffing tables and the deterministic snapshots rely on. Ages are measured against
``now`` (the replay cursor's time, or the injected clock in live mode), never against
the wall clock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from diagnose.sizing import describe_memory
from provisioner.model.quantity import format_cpu
from tui.state import CONDITIONS, ClaimState, ClusterState, LogRecord

__all__ = [
    "CLAIM_COLUMNS",
    "LEVELS",
    "POD_COLUMNS",
    "POD_SORT",
    "GaugeView",
    "GroupView",
    "claim_rows",
    "format_age",
    "format_time",
    "gauges",
    "log_matches",
    "pending_changes",
    "pending_groups",
    "pending_rows",
]

Row = tuple[str, ...]
POD_COLUMNS = ("Pod", "Age", "Cause", "NodeClaim", "Requests", "Scheduler", "Provisioner", "Workload")
POD_SORT = (7, 2, 0)  # rows are kept grouped: workload, cause, pod
CLAIM_COLUMNS = (
    "NodeClaim", "NodePool", "Instance type", "vCPUs", "Capacity", "Zone",
    "Launched", "Registered", "Initialized", "Age", "Last cloud error",
)
LEVELS = ("DEBUG", "INFO", "WARN", "ERROR")


def format_age(since: datetime | None, now: datetime | None) -> str:
    if since is None or now is None:
        return "-"
    return _age(max(int((now - since).total_seconds()), 0))


@lru_cache(maxsize=4096)
def _age(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    if seconds < 172800:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


def format_time(moment: datetime | None) -> str:
    return moment.strftime("%H:%M:%S") if moment else "-"


@lru_cache(maxsize=1024)
def _requests(cpu_m: int | None, memory: int | None, derived: tuple[int, int] | None = None) -> str:
    if cpu_m is None and memory is None:
        # "≈": not read from the pod but derived by karp-diagnose from its NodeClaim's requests
        return f"≈{_requests(*derived)}" if derived else "-"
    parts = [format_cpu(cpu_m) if cpu_m is not None else "", describe_memory(memory) if memory is not None else ""]
    return "/".join(p for p in parts if p)


def _pod_row(state: ClusterState, key: str, now: datetime | None) -> Row | None:
    pod = state.pods.get(key)
    if pod is None:
        return None
    return (
        key.rpartition("/")[2],
        format_age(pod.first_seen, now),
        state.cause_of(pod),
        pod.nodeclaim or "-",
        _requests(pod.cpu_m, pod.memory, state.derived_requests.get(key)),
        pod.scheduler_reason or "-",
        pod.provisioner_reason or "-",
        pod.workload,
    )


def pending_rows(state: ClusterState, now: datetime | None) -> dict[str, Row]:
    """One row per pending pod, plus one per workload for the pods a log only counted."""
    rows: dict[str, Row] = {}
    for key in state.pods:
        row = _pod_row(state, key, now)
        if row is not None:
            rows[key] = row
    for workload, count in state.counted.items():
        rows[f"counted:{workload}"] = (
            f"… {count} other(s), counted",
            "-",
            state.counted_cause(workload),
            state.counted_claim.get(workload, "-"),
            _requests(None, None, state.derived_requests.get(workload)),
            "-",
            "named only as a count in the log",
            workload,
        )
    return rows


def pending_changes(state: ClusterState, keys: Iterable[str], now: datetime | None) -> dict[str, Row | None]:
    """Rows of the given pods only (None for a pod that left): the update when few pods changed."""
    return {key: _pod_row(state, key, now) for key in keys}


@dataclass(frozen=True, slots=True)
class GroupView:
    workload: str
    cause: str
    named: int
    counted: int

    @property
    def total(self) -> int:
        return self.named + self.counted


def pending_groups(state: ClusterState) -> list[GroupView]:
    named: Counter[tuple[str, str]] = Counter(
        (pod.workload, state.cause_of(pod)) for pod in state.pods.values()
    )
    counted: Counter[tuple[str, str]] = Counter()
    for workload, count in state.counted.items():
        counted[(workload, state.counted_cause(workload))] += count
    keys = sorted(set(named) | set(counted))
    return [GroupView(w, c, named[(w, c)], counted[(w, c)]) for w, c in keys]


def _condition(claim: ClaimState, kind: str) -> str:
    condition = claim.conditions[kind]
    if condition.status == "Unknown" and not condition.reason:
        return "-"
    return f"{condition.status} {condition.reason}".strip() if condition.status != "True" else "True"


def claim_rows(state: ClusterState, now: datetime | None) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for name, claim in state.claims.items():
        error = f"{claim.last_error_code}: {claim.last_error}" if claim.last_error_code else claim.last_error
        rows[name] = (
            name,
            claim.nodepool or "-",
            claim.instance_type or "-",
            str(claim.vcpus) if claim.vcpus is not None else "-",
            claim.capacity_type or "-",
            claim.zone or "-",
            *(_condition(claim, kind) for kind in CONDITIONS),
            format_age(claim.created, now),
            error or "-",
        )
    return rows


@dataclass(frozen=True, slots=True)
class GaugeView:
    name: str
    scope: str
    limit: int | None
    usage: int | None
    read_at: datetime | None
    source: str
    demand_vcpus: int
    demand_claims: tuple[str, ...]
    demand_pods: int

    @property
    def headroom(self) -> int | None:
        if self.limit is None or self.usage is None:
            return None
        return max(self.limit - self.usage, 0)


def gauges(state: ClusterState) -> list[GaugeView]:
    """Regional first, then every family in use, then spot."""
    names = ["cores", *state.family_gauges(), "lowPriorityCores"]
    out = []
    for name in names:
        gauge = state.gauge(name)
        vcpus, claims, pods = state.demand_on(name)
        out.append(
            GaugeView(
                name, gauge.scope, gauge.limit, gauge.usage, gauge.read_at, gauge.source,
                vcpus, tuple(claims), pods,
            )
        )
    return out


def log_matches(record: LogRecord, min_level: str, component: str, text: str) -> bool:
    level = record.level if record.level in LEVELS else "INFO"
    if LEVELS.index(level) < LEVELS.index(min_level):
        return False
    if component and record.component != component:
        return False
    return not text or text.lower() in record.message.lower() or text.lower() in record.raw.lower()
