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
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import polars as pl

from diagnose.categories import (
    LAUNCH_EVENTS,
    SCHEDULED_EVENTS,
    SUCCESS_EVENTS,
    classified,
    error_text,
    text_of,
)
from diagnose.findings import Evidence
from diagnose.routine import (
    CLAIM_WORD,
    NOMINATED,
    ROUTINE_COLUMNS,
    SUBSCRIPTION,
    VM_NAME,
    Summary,
    split_deferred,
)
from diagnose.schema import SCHEMA
from provisioner.model.errors import CloudError, QuotaNumbers, parse_quota_message

__all__ = [
    "RELEVANT",
    "ClaimTimeline",
    "Correlation",
    "Occurrence",
    "PodBatch",
    "correlate",
    "owner_of",
]

_TIME = SCHEMA["time"]
# Kubernetes' SafeEncodeString alphabet: pod-template-hash and generated suffixes use it.
_SAFE = "bcdfghjklmnpqrstvwxz2456789"
_DEPLOYMENT_POD = re.compile(rf"^(?P<name>.+)-[{_SAFE}]{{6,10}}-[{_SAFE}]{{5}}$")
_STATEFULSET_POD = re.compile(r"^(?P<name>.+)-\d+$")
_NOMINATED = re.compile(NOMINATED)
_ASSIGNED = re.compile(r"Successfully assigned (\S+?/\S+?) to (\S+)")
_VM_NAME = re.compile(VM_NAME)
_CLAIM_WORD = re.compile(CLAIM_WORD)
_SUBSCRIPTION = re.compile(SUBSCRIPTION)
_NODEPOOL_NAMED = re.compile(r"nodepool:? \\?\"([a-z0-9][a-z0-9.-]*)\\?\"", re.IGNORECASE)

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

    batch_shared: bool = False  # the batch's pods were split over several NodeClaims

    @property
    def pods(self) -> list[str]:
        """Pods nominated to this claim, then (when the batch made only this claim) the batch's pods."""
        pods = list(self.nominated)
        if self.batch is not None and not self.batch_shared:
            pods += [p for p in self.batch.pods if p not in pods]
        return pods

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
    nodepool_success: dict[str, pl.Series]  # NodePool -> its success times, sorted
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
        """The NodePool's first success at or after ``moment`` (its lists are in time order)."""
        moments = self.nodepool_success.get(nodepool)
        if moments is None:
            return None
        first = 0 if moment is None else int(moments.search_sorted(moment, side="left"))
        return moments[first] if first < moments.len() else None


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


# Events the walk reads (the rest only matter when they carry an error).
USED_EVENTS = (
    "pods.found",
    "nodeclaim.created",
    "nodeclaim.instance_selected",
    "vm.creating",
    "nodeclaim.deleted",
    "quota.blocked",
    "nodepool.limit_reached",
    "nodepool.no_compatible",
    "cloud.throttled",
    *SUCCESS_EVENTS,
    *LAUNCH_EVENTS,
    "nodeclaim.registration_timeout",
    "pod.unschedulable",
)
# The rows the walk reads (``diagnose.ingest.load_lean`` keeps these and the unparsed lines).
RELEVANT = (
    pl.col("event").is_in(USED_EVENTS)
    | pl.col("event").cast(pl.Utf8).str.starts_with("k8s.")
    | (pl.col("source") == "event")
    | pl.col("error_code").is_not_null()
    | pl.col("error_message").is_not_null()
    | pl.col("category").is_not_null()
    | pl.col("level").is_in(["ERROR", "WARN"])
)


def _relevant(frame: pl.DataFrame, columns: Sequence[str] | None = None) -> pl.DataFrame:
    """The rows the walk reads, in walk order (time, then table order; no time last), with
    their row number in ``frame`` as ``_row``; only ``columns`` (and ``_row``) when given.
    A table from ingest is in time order already: then nothing is sorted."""
    mask = frame.select(((pl.col("parse_status") != "unparsed") & RELEVANT).alias("m")).to_series()
    chosen = frame if columns is None else frame.select(columns)
    relevant = chosen.with_row_index("_row").filter(mask)
    if relevant["time"].is_sorted(nulls_last=True):
        return relevant
    return relevant.sort(["time", "_row"], nulls_last=True)


def _rows(relevant: pl.DataFrame) -> Iterator[dict[str, Any]]:
    yield from relevant.iter_rows(named=True)


def _evidence(row: dict[str, Any], role: str, with_text: bool = False) -> Evidence:
    text = ""
    if with_text:
        text = (row.get("raw") or row.get("message") or "")[:TEXT_LIMIT]
    return Evidence(str(row.get("file") or "-"), int(row.get("line") or 0), role, text)


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
        name = text_of(row, "nodeclaim")
        if name:
            return name
        if row.get("object_kind") == "NodeClaim" and row.get("object_name"):
            return str(row["object_name"])
        text = " ".join(filter(None, (text_of(row, "message"), text_of(row, "raw"))))
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
        event = text_of(row, "event")
        if not self.subscription:
            match = _SUBSCRIPTION.search(text_of(row, "raw") or text_of(row, "message"))
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
            match = _NOMINATED.search(text_of(row, "message"))
            pod = text_of(row, "object_name")
            if match and pod:
                nominated = self.claim(match.group(1)).nominated
                if pod not in nominated:
                    nominated.append(pod)
        elif event in SCHEDULED_EVENTS or "Successfully assigned" in text_of(row, "message"):
            match = _ASSIGNED.search(text_of(row, "message"))
            pod = match.group(1) if match else text_of(row, "object_name")
            if pod and moment is not None:
                self.bind(pod, moment)
        if event in SUCCESS_EVENTS and moment is not None:
            nodepool = text_of(row, "nodepool") or (self.claims[claim_name].nodepool if claim_name else "")
            if nodepool:
                self.nodepool_success.setdefault(nodepool, []).append(moment)
        category, cloud = classified(row)
        if category is not None:
            self.occurrences.append(self.occurrence(row, category, cloud, claim_name, moment))

    def track_claim(self, claim: ClaimTimeline, row: dict[str, Any], event: str, moment: datetime | None) -> None:
        claim.nodepool = claim.nodepool or text_of(row, "nodepool")
        if event == "nodeclaim.created":
            claim.created_at = moment
            claim.requests_cpu_m = row.get("requests_cpu_m")
            claim.requests_memory = row.get("requests_memory")
            claim.requests_pods = row.get("requests_pods")
            claim.candidates_count = row.get("instance_types_count")
            if self.batches and claim.batch is None:
                claim.batch = self.batches[-1]
                claim.batch_index = len(self.batches) - 1
                sharing = self.batch_claims.setdefault(claim.batch_index, [])
                sharing.append(claim.name)
                if len(sharing) > 1:
                    for name in sharing:
                        self.claims[name].batch_shared = True
            claim.evidence.append(_evidence(row, "nodeclaim"))
        elif event in ("nodeclaim.instance_selected", "vm.creating", "nodeclaim.launched") and row.get("instance_type"):
            if claim.instance_type != row["instance_type"]:
                claim.evidence.append(_evidence(row, "instance-type"))
            claim.instance_type = str(row["instance_type"])
        elif event == "nodeclaim.deleted":
            claim.deleted_at = moment
        for key in ("zone", "capacity_type", "node"):
            value = text_of(row, key)
            if value:
                setattr(claim, key, value)
        if event in SUCCESS_EVENTS and claim.success_at is None and moment is not None:
            claim.success_at = moment
            claim.evidence.append(_evidence(row, "success"))
            for pod in claim.pods:
                self.bind(pod, moment)

    def occurrence(
        self, row: dict[str, Any], category: str, cloud: CloudError | None, claim_name: str, moment: datetime | None
    ) -> Occurrence:
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
        code, message = error_text(row)
        quota = _quota(row, message)
        region = text_of(row, "region") or (quota.region if quota else "")
        return Occurrence(
            category=category,
            time=moment,
            evidence=_evidence(row, "error", with_text=True),
            source=text_of(row, "source") or "log",
            event=text_of(row, "event"),
            code=code,
            message=message,
            nodeclaim=claim_name,
            nodepool=text_of(row, "nodepool") or (claim.nodepool if claim else "") or _named_nodepool(message),
            instance_type=text_of(row, "instance_type") or (claim.instance_type if claim else ""),
            zone=text_of(row, "zone") or (claim.zone if claim else ""),
            capacity_type=text_of(row, "capacity_type") or (claim.capacity_type if claim else ""),
            region=region,
            pods=pods,
            pod_count=pod_count,
            quota=quota,
            cloud=cloud,
        )


_NODEPOOL_SCOPED = ("no-compatible-instance-types", "nodepool-limit", "nodeclass-not-ready", "insufficient-capacity")


def _named_nodepool(text: str) -> str:
    """``incompatible with nodepool "x"`` / ``exceed limits for nodepool: "x"`` -> x."""
    match = _NODEPOOL_NAMED.search(text)
    return match.group(1) if match else ""


def _quota(row: dict[str, Any], message: str) -> QuotaNumbers | None:
    if row.get("quota_limit") is not None and row.get("quota_usage") is not None:
        limit, usage = int(row["quota_limit"]), int(row["quota_usage"])
        required = int(row.get("quota_required") or 0)
        new_limit = int(row.get("quota_new_limit") or (usage + required))
        scope = text_of(row, "quota_scope") or "regional"
        name = text_of(row, "quota_name") or {"regional": "cores", "spot": "lowPriorityCores"}.get(scope, "")
        return QuotaNumbers(scope, name, limit, usage, required, new_limit, text_of(row, "region"))
    for text in (message, text_of(row, "raw")):
        numbers = parse_quota_message(text) if text else None
        if numbers is not None:
            return numbers
    return None


def correlate(frame: pl.DataFrame, *, summarise: bool = False) -> Correlation:
    """Walk the table once, in time order, and link pods, claims, errors and successes.

    ``summarise``: account for the routine rows with polars (``diagnose.routine``) and walk
    only the others. The occurrences, NodePool successes, times and subscription are the
    same, and so is the binding of every pod a walked row names (a finding's pods are among
    them); ``claims``, ``batches`` and ``pod_bound`` then hold only the walked ones."""
    state = _Pass()
    if summarise:
        walked, summary, finish = split_deferred(_relevant(frame, ROUTINE_COLUMNS))
        relevant = frame[walked["_row"]]  # every column, for the rows walked only
        state.subscription = summary.subscription
        state.first, state.last = summary.first, summary.last
        with ThreadPoolExecutor(max_workers=1) as pool:  # the summary's polars work beside the walk
            finishing = pool.submit(finish)
            for row in _rows(relevant):
                state.feed(row)
            finishing.result()
        for pod, moment in summary.pod_bound.items():  # (the latest time wins, in any order)
            state.bind(pod, moment)
    else:
        summary = Summary()
        for row in _rows(_relevant(frame).drop("_row")):
            state.feed(row)
    success: dict[str, pl.Series] = {}
    for nodepool in {**summary.nodepool_success, **state.nodepool_success}:
        walked_times = pl.Series("time", state.nodepool_success.get(nodepool, []), dtype=_TIME)
        summarised = summary.nodepool_success.get(nodepool)
        moments = walked_times if summarised is None else pl.concat([summarised.cast(_TIME), walked_times])
        success[nodepool] = moments.sort()
    return Correlation(
        claims=state.claims,
        occurrences=state.occurrences,
        batches=state.batches,
        pod_bound=state.pod_bound,
        nodepool_success=success,
        first_time=state.first,
        last_time=state.last,
        subscription=state.subscription,
    )
