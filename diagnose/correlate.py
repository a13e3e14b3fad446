"""Correlation: from the normalised table to timelines that the rules can reason about.

The ingested table is a flat sequence of lines and events. Correlation walks it once, in
time order, and links what belongs together:

* pods → NodeClaims: a "found provisionable pod(s)" batch is followed by the NodeClaims
  created for it (the alpha and v1 logs do not name the pods on the claim line), and a
  ``Nominated`` event ("Pod should schedule on: nodeclaim/X") names the pods exactly;
* NodeClaims → NodePool, requests, the instance type chosen, the zone and capacity type;
* every error line or warning event → one :class:`Occurrence` with its diagnosis category,
  the cloud error's code and message, the quota numbers it carries and the objects it
  concerns (taken from the line, or from the claim it names);
* success signals (a claim launched or registered, a pod scheduled) with their time, so a
  rule can tell a cause that still blocks from one that was overcome later.

Pod names also give their owner when Kubernetes' naming makes it certain:
``inflate-74ccd665f4-79x4g`` belongs to the Deployment ``inflate`` (pod-template-hash
then a five-letter suffix), ``web-0`` to the StatefulSet ``web``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import polars as pl

from diagnose.findings import CATEGORIES, Evidence
from provisioner.model.errors import CloudError, QuotaNumbers, classify, parse_quota_message

__all__ = [
    "ClaimTimeline",
    "Correlation",
    "Occurrence",
    "PodBatch",
    "correlate",
    "owner_of",
]

# Kubernetes' SafeEncodeString alphabet: pod-template-hash and generated suffixes use it.
_SAFE = "bcdfghjklmnpqrstvwxz2456789"
_DEPLOYMENT_POD = re.compile(rf"^(?P<name>.+)-[{_SAFE}]{{6,10}}-[{_SAFE}]{{5}}$")
_STATEFULSET_POD = re.compile(r"^(?P<name>.+)-\d+$")
_NOMINATED = re.compile(r"nodeclaim/([A-Za-z0-9.-]+)")
_ASSIGNED = re.compile(r"Successfully assigned (\S+?/\S+?) to (\S+)")
_VM_NAME = re.compile(r"aks-([a-z0-9][a-z0-9.-]*[a-z0-9])")
_CLAIM_WORD = re.compile(r"(?:nodeclaim|NodeClaim)[ /:\"]+([a-z0-9][a-z0-9.-]*[a-z0-9])")
_ERROR_CODE = re.compile(r"ERROR CODE:\s*(\w+)|\"code\":\s*\"(\w+)\"|^\((\w+)\)")
_STATUS = re.compile(r"RESPONSE (\d{3})")
_SUBSCRIPTION = re.compile(r"/subscriptions/([0-9a-fA-F-]{36})")

SUCCESS_EVENTS = ("nodeclaim.launched", "nodeclaim.registered", "nodeclaim.initialized")
SCHEDULED_EVENTS = ("k8s.Scheduled",)
# Warning events that are the symptom (a pod waiting), not a cause.
SYMPTOM_EVENTS = ("k8s.FailedScheduling", "pod.unschedulable", "k8s.Nominated")
LAUNCH_EVENTS = ("nodeclaim.launch_failed", "vm.creating", "nic.creating", "nodeclaim.launch_timeout")
TEXT_LIMIT = 2000  # evidence text kept per line


@dataclass(frozen=True, slots=True)
class PodBatch:
    """Pods that one "found provisionable pod(s)" line (or event) reported as pending."""

    time: datetime | None
    pods: tuple[str, ...]
    pod_count: int
    evidence: Evidence


@dataclass(slots=True)
class ClaimTimeline:
    """Everything the input says about one NodeClaim, in time order (built during the pass)."""

    name: str
    nodepool: str = ""
    created_at: datetime | None = None
    requests_cpu_m: int | None = None
    requests_memory: int | None = None
    requests_pods: int | None = None
    candidates_count: int | None = None
    instance_type: str = ""
    zone: str = ""
    capacity_type: str = ""
    node: str = ""
    batch: PodBatch | None = None
    batch_index: int = -1
    nominated: list[str] = field(default_factory=list)
    success_at: datetime | None = None
    deleted_at: datetime | None = None
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def pods(self) -> list[str]:
        if self.nominated:
            return list(self.nominated)
        return list(self.batch.pods) if self.batch else []

    @property
    def pod_count(self) -> int:
        batch_count = self.batch.pod_count if self.batch else 0
        return max(len(self.nominated), batch_count)


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One line or event that carries an error, already classified."""

    category: str
    time: datetime | None
    evidence: Evidence
    source: str
    event: str
    code: str
    message: str  # the cloud error's message (or the line's error text), verbatim
    nodeclaim: str
    nodepool: str
    instance_type: str
    zone: str
    capacity_type: str
    region: str
    pods: tuple[str, ...]
    pod_count: int
    quota: QuotaNumbers | None
    cloud: CloudError | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Correlation:
    claims: dict[str, ClaimTimeline]
    occurrences: list[Occurrence]
    batches: list[PodBatch]
    pod_bound: dict[str, datetime]  # pod -> latest time it was seen getting a node
    nodepool_success: dict[str, list[datetime]]
    first_time: datetime | None
    last_time: datetime | None
    subscription: str = ""  # the subscription id when the input shows one unmasked

    def claim_success_after(self, name: str, moment: datetime | None) -> datetime | None:
        claim = self.claims.get(name)
        if claim is None or claim.success_at is None:
            return None
        if moment is None or claim.success_at >= moment:
            return claim.success_at
        return None

    def nodepool_success_after(self, nodepool: str, moment: datetime | None) -> datetime | None:
        for moment_ok in self.nodepool_success.get(nodepool, []):
            if moment is None or moment_ok >= moment:
                return moment_ok
        return None


def owner_of(pod: str) -> str | None:
    """``default/inflate-74ccd665f4-79x4g`` -> ``Deployment default/inflate``; None when unsure."""
    namespace, _, name = pod.rpartition("/")
    prefix = f"{namespace}/" if namespace else ""
    match = _DEPLOYMENT_POD.match(name)
    if match:
        return f"Deployment {prefix}{match['name']}"
    match = _STATEFULSET_POD.match(name)
    if match:
        return f"StatefulSet {prefix}{match['name']}"
    return None


_RELEVANT = (
    pl.col("event").is_not_null()
    | pl.col("error_code").is_not_null()
    | pl.col("error_message").is_not_null()
    | pl.col("category").is_not_null()
    | pl.col("level").is_in(["ERROR", "WARN"])
)


def _rows(frame: pl.DataFrame) -> Iterator[dict[str, Any]]:
    relevant = frame.filter((pl.col("parse_status") != "unparsed") & _RELEVANT)
    relevant = relevant.with_row_index("_order").sort(["time", "_order"], nulls_last=True)
    yield from relevant.iter_rows(named=True)


def _evidence(row: dict[str, Any], role: str, with_text: bool = False) -> Evidence:
    text = ""
    if with_text:
        text = (row.get("raw") or row.get("message") or "")[:TEXT_LIMIT]
    return Evidence(str(row.get("file") or "-"), int(row.get("line") or 0), role, text)


def _str(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    return str(value) if value is not None else ""


class _Pass:
    """The single walk over the table; keeps the state that links lines together."""

    def __init__(self) -> None:
        self.claims: dict[str, ClaimTimeline] = {}
        self.occurrences: list[Occurrence] = []
        self.batches: list[PodBatch] = []
        self.batch_claims: dict[int, list[str]] = {}
        self.pod_bound: dict[str, datetime] = {}
        self.nodepool_success: dict[str, list[datetime]] = {}
        self.first: datetime | None = None
        self.last: datetime | None = None
        self.subscription = ""

    def bind(self, pod: str, moment: datetime) -> None:
        """Remember the latest moment a pod got a node (a later error then a later bind both count)."""
        previous = self.pod_bound.get(pod)
        if previous is None or moment > previous:
            self.pod_bound[pod] = moment

    def claim(self, name: str) -> ClaimTimeline:
        timeline = self.claims.get(name)
        if timeline is None:
            timeline = self.claims[name] = ClaimTimeline(name)
        return timeline

    def claim_of(self, row: dict[str, Any]) -> str:
        name = _str(row, "nodeclaim")
        if name:
            return name
        if row.get("object_kind") == "NodeClaim" and row.get("object_name"):
            return str(row["object_name"])
        text = " ".join(filter(None, (_str(row, "message"), _str(row, "raw"))))
        for pattern in (_VM_NAME, _CLAIM_WORD):
            for match in pattern.finditer(text):
                if match.group(1) in self.claims:
                    return match.group(1)
        return ""

    def feed(self, row: dict[str, Any]) -> None:
        moment: datetime | None = row.get("time")
        if moment is not None:
            self.first = moment if self.first is None else min(self.first, moment)
            self.last = moment if self.last is None else max(self.last, moment)
        event = _str(row, "event")
        if not self.subscription:
            match = _SUBSCRIPTION.search(_str(row, "raw") or _str(row, "message"))
            if match:
                self.subscription = match.group(1)
        claim_name = self.claim_of(row)
        if claim_name:
            self.track_claim(self.claim(claim_name), row, event, moment)
        if event == "pods.found":
            pods = tuple(row.get("pods") or ())
            count = max(int(row.get("pod_count") or 0), len(pods))
            self.batches.append(PodBatch(moment, pods, count, _evidence(row, "pods")))
        elif event == "k8s.Nominated":
            match = _NOMINATED.search(_str(row, "message"))
            pod = _str(row, "object_name")
            if match and pod:
                nominated = self.claim(match.group(1)).nominated
                if pod not in nominated:
                    nominated.append(pod)
        elif event in SCHEDULED_EVENTS or "Successfully assigned" in _str(row, "message"):
            match = _ASSIGNED.search(_str(row, "message"))
            pod = match.group(1) if match else _str(row, "object_name")
            if pod and moment is not None:
                self.bind(pod, moment)
        if event in SUCCESS_EVENTS and moment is not None:
            nodepool = _str(row, "nodepool") or (self.claims[claim_name].nodepool if claim_name else "")
            if nodepool:
                self.nodepool_success.setdefault(nodepool, []).append(moment)
        category = categorize(row)
        if category is not None:
            self.occurrences.append(self.occurrence(row, category, claim_name, moment))

    def track_claim(self, claim: ClaimTimeline, row: dict[str, Any], event: str, moment: datetime | None) -> None:
        claim.nodepool = claim.nodepool or _str(row, "nodepool")
        if event == "nodeclaim.created":
            claim.created_at = moment
            claim.requests_cpu_m = row.get("requests_cpu_m")
            claim.requests_memory = row.get("requests_memory")
            claim.requests_pods = row.get("requests_pods")
            claim.candidates_count = row.get("instance_types_count")
            if self.batches and claim.batch is None:
                claim.batch = self.batches[-1]
                claim.batch_index = len(self.batches) - 1
                self.batch_claims.setdefault(claim.batch_index, []).append(claim.name)
            claim.evidence.append(_evidence(row, "nodeclaim"))
        elif event in ("nodeclaim.instance_selected", "vm.creating", "nodeclaim.launched") and row.get("instance_type"):
            if claim.instance_type != row["instance_type"]:
                claim.evidence.append(_evidence(row, "instance-type"))
            claim.instance_type = str(row["instance_type"])
        elif event == "nodeclaim.deleted":
            claim.deleted_at = moment
        for key in ("zone", "capacity_type", "node"):
            value = _str(row, key)
            if value:
                setattr(claim, key, value)
        if event in SUCCESS_EVENTS and claim.success_at is None and moment is not None:
            claim.success_at = moment
            claim.evidence.append(_evidence(row, "success"))
            shared = len(self.batch_claims.get(claim.batch_index, [])) > 1
            for pod in claim.nominated or ([] if shared else claim.pods):
                self.bind(pod, moment)

    def occurrence(self, row: dict[str, Any], category: str, claim_name: str, moment: datetime | None) -> Occurrence:
        claim = self.claims.get(claim_name) if claim_name else None
        pods = tuple(row.get("pods") or ())
        if not pods and row.get("object_kind") == "Pod" and row.get("object_name"):
            pods = (str(row["object_name"]),)
        pod_count = max(int(row.get("pod_count") or 0), len(pods))
        if claim is not None and not pods:
            pods, pod_count = tuple(claim.pods), claim.pod_count
        elif not pods and self.batches and category in _NODEPOOL_SCOPED:
            batch = self.batches[-1]
            if moment is None or batch.time is None or moment - batch.time <= timedelta(minutes=2):
                pods, pod_count = batch.pods, batch.pod_count
        code, message = _error_text(row)
        cloud = classify(code, message) if message else None
        quota = _quota(row, message)
        region = _str(row, "region") or (quota.region if quota else "")
        return Occurrence(
            category=category,
            time=moment,
            evidence=_evidence(row, "error", with_text=True),
            source=_str(row, "source") or "log",
            event=_str(row, "event"),
            code=code,
            message=message,
            nodeclaim=claim_name,
            nodepool=_str(row, "nodepool") or (claim.nodepool if claim else ""),
            instance_type=_str(row, "instance_type") or (claim.instance_type if claim else ""),
            zone=_str(row, "zone") or (claim.zone if claim else ""),
            capacity_type=_str(row, "capacity_type") or (claim.capacity_type if claim else ""),
            region=region,
            pods=pods,
            pod_count=pod_count,
            quota=quota,
            cloud=cloud,
        )


_NODEPOOL_SCOPED = ("no-compatible-instance-types", "nodepool-limit", "nodeclass-not-ready", "insufficient-capacity")


def _error_text(row: dict[str, Any]) -> tuple[str, str]:
    """The cloud error's code and message; falls back to the line's own text."""
    code = _str(row, "error_code")
    message = _str(row, "error_message") or _str(row, "message") or _str(row, "raw")
    if not code:
        for text in (message, _str(row, "raw")):
            match = _ERROR_CODE.search(text)
            if match:
                code = next(g for g in match.groups() if g)
                break
    return code, message


def _quota(row: dict[str, Any], message: str) -> QuotaNumbers | None:
    if row.get("quota_limit") is not None and row.get("quota_usage") is not None:
        limit, usage = int(row["quota_limit"]), int(row["quota_usage"])
        required = int(row.get("quota_required") or 0)
        new_limit = int(row.get("quota_new_limit") or (usage + required))
        scope = _str(row, "quota_scope") or "regional"
        name = _str(row, "quota_name") or {"regional": "cores", "spot": "lowPriorityCores"}.get(scope, "")
        return QuotaNumbers(scope, name, limit, usage, required, new_limit, _str(row, "region"))
    for text in (message, _str(row, "raw")):
        numbers = parse_quota_message(text) if text else None
        if numbers is not None:
            return numbers
    return None


# --- categories -------------------------------------------------------------------------

_EVENT_CATEGORIES = {
    "nodeclaim.registration_timeout": "registration-timeout",
    "nodeclaim.launch_timeout": "launch-failed",
    "nodepool.limit_reached": "nodepool-limit",
    "nodepool.no_compatible": "no-compatible-instance-types",
    "k8s.NoCompatibleInstanceTypes": "no-compatible-instance-types",
    "cloud.throttled": "throttled",
}
_QUOTA_SCOPES = {"regional": "regional-vcpu-quota", "family": "family-vcpu-quota", "spot": "spot-vcpu-quota"}
_PHRASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "no-compatible-instance-types",
        (
            "no instance type satisfied",
            "incompatible with nodepool",
            "no compatible instance types",
            "filtered out all compatible",
            "no instance types satisf",
        ),
    ),
    ("nodepool-limit", ("exceed limits for nodepool", "exceeds limits for nodepool", "nodepool limit", "limits exceeded")),
    (
        "nodeclass-not-ready",
        ("nodeclass not ready", "nodeclass is not ready", "nodeclassready=false", "nodeclass not found", "nodeclass"),
    ),
    ("registration-timeout", ("registration timed out", "registration timeout", "failed to register", "not registered after")),
    ("insufficient-capacity", ("insufficient capacity", "all requested instance types were unavailable")),
)
_LAUNCH_WORDS = ("failed launching", "creating virtual machine", "creating network interface", "creating instance", "launch")


def categorize(row: dict[str, Any]) -> str | None:
    """The diagnosis category of a line, or None when the line carries no error."""
    event = _str(row, "event")
    if event in SUCCESS_EVENTS or (event in SYMPTOM_EVENTS and not _is_karpenter_error(row)):
        return None
    if event == "quota.blocked":
        return _QUOTA_SCOPES.get(_str(row, "quota_scope"), "regional-vcpu-quota")
    if event in _EVENT_CATEGORIES:
        return _EVENT_CATEGORIES[event]
    given = _str(row, "category")
    code, message = _error_text(row)
    has_error = bool(_str(row, "error_code") or _str(row, "error_message") or given)
    level = _str(row, "level")
    if not has_error and level not in ("ERROR", "WARN") and event != "nodeclaim.launch_failed":
        return None
    cloud = classify(code, message)
    if cloud.category != "unknown-error":
        return cloud.category
    lowered = f"{message} {_str(row, 'message')} {_str(row, 'reason')}".lower()
    for category, phrases in _PHRASES:
        if category == "nodeclass-not-ready":
            if "nodeclass" in lowered and ("not ready" in lowered or "not found" in lowered or "ready=false" in lowered):
                return category
            continue
        if any(phrase in lowered for phrase in phrases):
            return category
    if given in CATEGORIES and given != "unknown-error":
        return given
    if code or _STATUS.search(_str(row, "raw") or message):
        if event in LAUNCH_EVENTS or any(word in lowered for word in _LAUNCH_WORDS):
            return "launch-failed"
    if level == "WARN" and not has_error and _str(row, "source") != "event":
        return None  # a warning line without an error is not a cause
    return "unknown-error"


def _is_karpenter_error(row: dict[str, Any]) -> bool:
    """A FailedScheduling from Karpenter carries its reason ("incompatible with nodepool …")."""
    lowered = f"{_str(row, 'message')} {_str(row, 'error_message')}".lower()
    return any(phrase in lowered for _, phrases in _PHRASES[:2] for phrase in phrases)


def correlate(frame: pl.DataFrame) -> Correlation:
    """Walk the table once, in time order, and link pods, claims, errors and successes."""
    state = _Pass()
    for row in _rows(frame):
        state.feed(row)
    for moments in state.nodepool_success.values():
        moments.sort()
    return Correlation(
        claims=state.claims,
        occurrences=state.occurrences,
        batches=state.batches,
        pod_bound=state.pod_bound,
        nodepool_success=state.nodepool_success,
        first_time=state.first,
        last_time=state.last,
        subscription=state.subscription,
    )
