"""What karp-tui knows about the cluster at one moment: a pure state built from records.

A *record* is one row of the normalised table (``diagnose.schema``): a log line or a
Kubernetes Event, already parsed. ``ClusterState.apply(record)`` folds one row in;
replaying a log is ``apply_many`` over its rows up to the timeline's cursor. Live sources
may instead hand over a whole ``Snapshot`` (pods, claims and quota as read from the
cluster and from Azure), which replaces those parts in one go.

The state keeps:

- pending pods (each with workload, first-seen time, requests, the scheduler's and the
  provisioner's reasons, and the NodeClaim it was nominated to), plus pods a log line
  only *counted* ("… and 5 other(s)"), per workload;
- NodeClaims with NodePool, instance type, vCPUs, capacity type, zone, the
  Launched / Registered / Initialized conditions with reasons, and the last cloud error;
- vCPU quota gauges (regional, each family in use, spot) with the time each was read
  and the demand waiting on each;
- findings (set from karp-diagnose's analysis) and the log records themselves.

Nothing here reads a clock or touches the screen; ``views`` turns it into table rows. The
objects it holds are defined in ``tui.objects`` (re-exported here).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from diagnose.findings import Finding
from diagnose.sizing import vcpus_of
from provisioner.model.instance_type import quota_family_name
from provisioner.model.quota import REGIONAL_QUOTA, SPOT_QUOTA
from tui.objects import (
    CONDITIONS,
    ClaimState,
    Condition,
    LogRecord,
    PendingPod,
    QuotaGauge,
    Snapshot,
    workload_of,
)

__all__ = [
    "CONDITIONS",
    "ClaimState",
    "ClusterState",
    "Condition",
    "LogRecord",
    "PendingPod",
    "QuotaGauge",
    "Snapshot",
    "workload_of",
]

Record = Mapping[str, Any]


def _str(record: Record, key: str) -> str:
    value = record.get(key)
    return value if isinstance(value, str) else ""


def _int(record: Record, key: str) -> int | None:
    value = record.get(key)
    return value if isinstance(value, int) else None


def _time(record: Record) -> datetime | None:
    value = record.get("time")
    return value if isinstance(value, datetime) else None


_LOG_COLUMNS = frozenset({"file", "line", "time", "level", "component", "message", "raw"})
_LAUNCH_EVENTS = {"nodeclaim.launch_failed", "nodeclaim.launch_timeout"}
_GONE_POD_REASONS = {"Scheduled", "Started", "Killing", "Deleted"}
_NOMINATED_CLAIM = re.compile(r"nodeclaim/([\w.-]+)")


class ClusterState:
    """Pending pods, NodeClaims, quota, findings and log records, folded from records."""

    def __init__(self) -> None:
        self.pods: dict[str, PendingPod] = {}
        self.counted: dict[str, int] = {}  # workload -> pods counted but not named
        self.counted_claim: dict[str, str] = {}  # workload -> NodeClaim its counted pods were nominated to
        self.claims: dict[str, ClaimState] = {}
        self.quota: dict[str, QuotaGauge] = {
            REGIONAL_QUOTA: QuotaGauge(REGIONAL_QUOTA, "regional"),
            SPOT_QUOTA: QuotaGauge(SPOT_QUOTA, "spot"),
        }
        self.region = ""
        self.findings: list[Finding] = []
        self.derived_requests: dict[str, tuple[int, int]] = {}  # pod or workload -> (cpu m, bytes)
        self.log: list[LogRecord] = []
        self.log_at: dict[tuple[str, int], LogRecord] = {}  # (file, line) -> record, for evidence
        self.time: datetime | None = None  # time of the latest record applied
        # What changed since the screen last looked (``take_changes``): pod keys, or everything.
        self.changed_pods: set[str] = set()
        self.everything_changed = True
        self._batch: list[str] = []  # pods of the last "found provisionable" batch
        self._batch_workloads: list[str] = []

    # -- folding records ------------------------------------------------------------
    def apply_many(self, records: Iterable[Record]) -> None:
        for record in records:
            self.apply(record)

    def copy(self, log: bool = True) -> ClusterState:
        """An independent copy; without ``log``, the copy's log is empty (the caller restores it)."""
        twin = ClusterState()
        twin.pods = {k: copy.copy(p) for k, p in self.pods.items()}
        twin.claims = {
            k: replace(c, conditions={n: copy.copy(v) for n, v in c.conditions.items()}) for k, c in self.claims.items()
        }
        twin.quota = {k: copy.copy(g) for k, g in self.quota.items()}
        twin.counted, twin.counted_claim = dict(self.counted), dict(self.counted_claim)
        twin.derived_requests = dict(self.derived_requests)
        twin._batch, twin._batch_workloads = list(self._batch), list(self._batch_workloads)
        twin.region, twin.time, twin.findings = self.region, self.time, list(self.findings)
        if log:
            twin.log, twin.log_at = list(self.log), dict(self.log_at)
        return twin

    def restore_log(self, records: list[LogRecord]) -> None:
        """Set the log to ``records`` (a prefix of a longer replay's log)."""
        self.log = records
        self.log_at = {(r.file, r.line): r for r in records}

    def take_changes(self) -> tuple[bool, set[str]]:
        """(everything changed?, pod keys changed) since the last call; resets both."""
        changes = (self.everything_changed, self.changed_pods)
        self.everything_changed, self.changed_pods = False, set()
        return changes

    def apply(self, record: Record) -> None:
        # A record about one pod (a Kubernetes Event) changes that pod's row; any other record
        # may change causes, nominations and counts of many: the whole table is recomputed.
        if _str(record, "object_kind") == "Pod" and _str(record, "object_name"):
            self.changed_pods.add(_str(record, "object_name"))
        else:
            self.everything_changed = True
        moment = _time(record)
        if moment is not None and (self.time is None or moment > self.time):
            self.time = moment
        self._keep_log(record, moment)
        if region := _str(record, "region"):
            self.region = region
        event = _str(record, "event")
        if _str(record, "source") == "event" or event.startswith("k8s."):
            self._apply_k8s_event(record, moment)
            return
        pods = [p for p in record.get("pods") or [] if isinstance(p, str)]
        claim_name = _str(record, "nodeclaim")
        if event == "pods.found":
            self._found(pods, _int(record, "pod_count"), moment)
        elif event in ("pod.unschedulable", "quota.blocked", "nodepool.limit_reached", "nodepool.no_compatible"):
            self._blocked_pods(record, pods, moment)
        if claim_name:
            self._apply_claim(record, event, claim_name, pods, moment)
        if _str(record, "quota_name") and _int(record, "quota_limit") is not None:
            self._read_quota(record, moment)

    def _keep_log(self, record: Record, moment: datetime | None) -> None:
        fields = tuple((k, v) for k, v in record.items() if k not in _LOG_COLUMNS and v is not None and v != [] and v != "")
        entry = LogRecord(
            index=len(self.log),
            file=_str(record, "file"),
            line=_int(record, "line") or 0,
            time=moment,
            level=_str(record, "level") or "INFO",
            component=_str(record, "component"),
            message=_str(record, "message"),
            raw=_str(record, "raw"),
            fields=fields,
        )
        self.log.append(entry)
        self.log_at[(entry.file, entry.line)] = entry

    def _pod(self, key: str, moment: datetime | None) -> PendingPod:
        pod = self.pods.get(key)
        if pod is None:
            pod = self.pods[key] = PendingPod(key=key, workload=workload_of(key), first_seen=moment)
        return pod

    def _found(self, pods: list[str], count: int | None, moment: datetime | None) -> None:
        for key in pods:
            pod = self._pod(key, moment)
            pod.provisioner_reason = pod.provisioner_reason or "found provisionable"
        self._batch = list(pods)
        self._batch_workloads = sorted({workload_of(p) for p in pods})
        extra = (count or len(pods)) - len(pods)
        if extra > 0 and self._batch_workloads:
            # Pods behind "and N other(s)": counted against the batch's (first) workload.
            workload = self._batch_workloads[0]
            self.counted[workload] = max(self.counted.get(workload, 0), extra)
            self.counted_claim.pop(workload, None)

    def _blocked_pods(self, record: Record, pods: list[str], moment: datetime | None) -> None:
        reason = _str(record, "error_message") or _str(record, "message")
        for key in pods:
            pod = self._pod(key, moment)
            pod.provisioner_reason = reason
            pod.cause = _str(record, "category") or pod.cause

    def _claim(self, name: str, moment: datetime | None) -> ClaimState:
        claim = self.claims.get(name)
        if claim is None:
            claim = self.claims[name] = ClaimState(name=name, created=moment)
        return claim

    def _apply_claim(
        self, record: Record, event: str, name: str, pods: list[str], moment: datetime | None
    ) -> None:
        if event in ("nodeclaim.deleted", "gc.nodeclaim_deleted"):
            self.claims.pop(name, None)
            return
        claim = self._claim(name, moment)
        claim.nodepool = _str(record, "nodepool") or claim.nodepool
        claim.zone = _str(record, "zone") or claim.zone
        claim.capacity_type = _str(record, "capacity_type") or claim.capacity_type
        claim.node = _str(record, "node") or claim.node
        if instance_type := _str(record, "instance_type"):
            claim.instance_type = instance_type
            claim.vcpus = vcpus_of(instance_type, self.region) or claim.vcpus
        if (cpu := _int(record, "requests_cpu_m")) is not None:
            claim.requests_cpu_m = cpu
            claim.requests_memory = _int(record, "requests_memory")
            claim.requests_pods = _int(record, "requests_pods")
        if event == "nodeclaim.created":
            self._nominate(name, pods or self._batch)
        elif event == "nodeclaim.launched":
            self._condition(claim, "Launched", "True", "Launched", moment)
            claim.category = ""
        elif event == "nodeclaim.registered":
            self._condition(claim, "Registered", "True", "Registered", moment)
        elif event == "nodeclaim.initialized":
            self._condition(claim, "Initialized", "True", "Initialized", moment)
        elif event == "nodeclaim.registration_timeout":
            self._condition(claim, "Registered", "False", "RegistrationTimeout", moment)
        code = _str(record, "error_code")
        warned = _str(record, "source") == "event" and bool(_str(record, "category"))
        if code or warned or event in _LAUNCH_EVENTS or _str(record, "level") == "ERROR":
            self._claim_error(claim, record, code or (_str(record, "reason") if warned else ""), event, moment)

    def _claim_error(
        self, claim: ClaimState, record: Record, code: str, event: str, moment: datetime | None
    ) -> None:
        claim.last_error = _str(record, "error_message") or _str(record, "message")
        claim.last_error_code = code
        claim.category = _str(record, "category") or claim.category or "launch-failed"
        if event != "nodeclaim.registration_timeout" and claim.conditions["Launched"].status != "True":
            self._condition(claim, "Launched", "False", code or "LaunchFailed", moment)
        if quota_name := _str(record, "quota_name"):
            claim.quota_name = quota_name
            claim.quota_required = _int(record, "quota_required") or 0

    @staticmethod
    def _condition(claim: ClaimState, kind: str, status: str, reason: str, moment: datetime | None) -> None:
        condition = claim.conditions[kind]
        if condition.status != status:
            condition.since = moment
        condition.status, condition.reason = status, reason

    def _nominate(self, claim: str, pods: Iterable[str]) -> None:
        for key in pods:
            if key in self.pods and not self.pods[key].nodeclaim:
                self.pods[key].nodeclaim = claim
        for workload in self._batch_workloads:
            if self.counted.get(workload) and workload not in self.counted_claim:
                self.counted_claim[workload] = claim

    def _read_quota(self, record: Record, moment: datetime | None) -> None:
        name = _str(record, "quota_name")
        gauge = self.quota.get(name)
        if gauge is None:
            gauge = self.quota[name] = QuotaGauge(name, _str(record, "quota_scope") or "family")
        gauge.limit = _int(record, "quota_limit")
        gauge.usage = _int(record, "quota_usage")
        gauge.read_at = moment
        gauge.source = "log"

    def _apply_k8s_event(self, record: Record, moment: datetime | None) -> None:
        reason = _str(record, "reason") or _str(record, "event").removeprefix("k8s.")
        kind = _str(record, "object_kind")
        name = _str(record, "object_name")
        if kind == "Pod" and name:
            if reason in _GONE_POD_REASONS:
                self.pods.pop(name, None)
            elif reason == "FailedScheduling":
                self._pod(name, moment).scheduler_reason = _str(record, "message")
            elif reason == "Nominated":
                match = _NOMINATED_CLAIM.search(_str(record, "message"))
                claim = _str(record, "nodeclaim") or (match.group(1) if match else "")
                if claim:
                    self._pod(name, moment).nodeclaim = claim
        elif kind == "NodeClaim" and name:
            self._apply_claim(record, "", name, [], moment)

    # -- live snapshots and analysis --------------------------------------------------
    def apply_snapshot(self, snapshot: Snapshot) -> None:
        """Replace pods, claims and quota with a live reading; what only the log lines told
        (the provisioner's reason, a NodeClaim's quota error and its numbers) is kept."""
        if snapshot.pods is not None:
            changes: dict[str, PendingPod | None] = dict.fromkeys(k for k in self.pods if k not in snapshot.pods)
            for key, pod in snapshot.pods.items():
                if self.pods.get(key) != pod:
                    changes[key] = pod
            self.apply_pod_changes(changes)
            if self.counted:
                self.counted.clear()
                self.counted_claim.clear()
                self.everything_changed = True
        if snapshot.pod_changes is not None:
            self.apply_pod_changes(snapshot.pod_changes)
        if snapshot.claims is not None:
            causes_before = self._claim_causes()
            for name, claim in snapshot.claims.items():
                before = self.claims.get(name)
                if before is not None and before.category and claim.category in ("", "launch-failed"):
                    claim.category = before.category if claim.conditions["Launched"].status != "True" else ""
                    claim.quota_name, claim.quota_required = before.quota_name, before.quota_required
                    claim.last_error = claim.last_error or before.last_error
                    claim.last_error_code = claim.last_error_code or before.last_error_code
            self.claims = snapshot.claims
            if self._claim_causes() != causes_before:
                self.everything_changed = True
        if snapshot.quota is not None:
            self.region = snapshot.quota.region or self.region
            for name, item in snapshot.quota.items.items():
                gauge = self.quota.get(name) or QuotaGauge(name, item.scope)
                gauge.limit, gauge.usage = item.limit, item.usage
                gauge.read_at, gauge.source = snapshot.quota.read_at, snapshot.quota.source
                self.quota[name] = gauge
        if self.time is None or snapshot.taken_at > self.time:
            self.time = snapshot.taken_at

    def apply_pod_changes(self, changes: Mapping[str, PendingPod | None]) -> None:
        """Add, replace (``PendingPod``) or drop (``None``) pods; what only the log lines told
        about a pod (the provisioner's reason, its cause, its NodeClaim) is kept."""
        pods = self.pods
        for key, pod in changes.items():
            old = pods.get(key)
            if pod is None:
                if old is not None:
                    del pods[key]
                    self.changed_pods.add(key)
                continue
            if old is not None:
                pod.provisioner_reason = pod.provisioner_reason or old.provisioner_reason
                pod.cause = pod.cause or old.cause
                pod.nodeclaim = pod.nodeclaim or old.nodeclaim
                pod.first_seen = pod.first_seen or old.first_seen
            pods[key] = pod
            self.changed_pods.add(key)

    def _claim_causes(self) -> dict[str, str]:
        return {name: (c.category if c.blocked else "launching") for name, c in self.claims.items()}

    def set_findings(self, findings: list[Finding]) -> None:
        """karp-diagnose's findings; their per-pod requests (derived from a NodeClaim) fill gaps."""
        self.findings = list(findings)
        derived: dict[str, tuple[int, int]] = {}
        for finding in findings:
            if finding.per_pod is None:
                continue
            figures = (finding.per_pod.cpu_m, finding.per_pod.memory)
            for key in [*finding.pods, *finding.workloads]:
                derived[key] = figures
        if derived != self.derived_requests:
            self.derived_requests = derived
            self.everything_changed = True

    # -- derived views ------------------------------------------------------------------
    def cause_of(self, pod: PendingPod) -> str:
        """The pod's root cause: its own block, else its NodeClaim's error, else where it stands."""
        if pod.cause:
            return pod.cause
        claim = self.claims.get(pod.nodeclaim) if pod.nodeclaim else None
        if claim is not None and claim.blocked:
            return claim.category
        if claim is not None:
            return "launching"
        if pod.scheduler_reason or pod.provisioner_reason:
            return "unschedulable" if pod.cause else "waiting"
        return "waiting"

    def counted_cause(self, workload: str) -> str:
        claim = self.claims.get(self.counted_claim.get(workload, ""))
        if claim is None:
            return "waiting"
        return claim.category if claim.blocked else "launching"

    def family_gauges(self) -> list[str]:
        """VM-family quotas in use: those with vCPUs in use, those a NodeClaim's instance type
        counts against, and those an error was about (not the dozens of unused families)."""
        names = {n for n, g in self.quota.items() if g.scope == "family" and (g.usage or g.source == "log")}
        for claim in self.claims.values():
            family = quota_family_name(claim.instance_type) if claim.instance_type else None
            if family:
                names.add(family)
            if claim.quota_name and claim.quota_name not in (REGIONAL_QUOTA, SPOT_QUOTA):
                names.add(claim.quota_name)
        return sorted(names)

    def gauge(self, name: str) -> QuotaGauge:
        gauge = self.quota.get(name)
        if gauge is None:
            gauge = QuotaGauge(name, "family")
        return gauge

    def demand_on(self, name: str) -> tuple[int, list[str], int]:
        """vCPUs waiting on quota ``name``, the NodeClaims asking, and the pods behind them."""
        vcpus, claims = 0, []
        for claim in self.claims.values():
            if not claim.blocked:
                continue
            family = quota_family_name(claim.instance_type) if claim.instance_type else None
            on_this = claim.quota_name == name or (
                claim.quota_name == REGIONAL_QUOTA and name == family and claim.capacity_type != "spot"
            )
            if on_this:
                vcpus += claim.quota_required or claim.vcpus or 0
                claims.append(claim.name)
        asking = set(claims)
        pods = sum(1 for p in self.pods.values() if p.nodeclaim in asking) if asking else 0
        pods += sum(n for w, n in self.counted.items() if self.counted_claim.get(w) in asking)
        return vcpus, claims, pods
