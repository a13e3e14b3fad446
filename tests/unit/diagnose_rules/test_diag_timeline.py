"""Correlation over time: repeats collapse, causes separate, the latest state decides severity."""

from __future__ import annotations

from typing import Any

from diagnose.api import analyse
from diagnose.correlate import correlate, owner_of
from diagnose.findings import BLOCKING, INFO, WARNING


def report_of(ingested: Any) -> Any:
    return analyse(ingested.frame, ingested.stats)


def test_owner_inferred_from_pod_template_hash_names() -> None:
    assert owner_of("default/inflate-74ccd665f4-79x4g") == "Deployment default/inflate"
    assert owner_of("shop/web-0") == "StatefulSet shop/web"
    assert owner_of("default/standalone") is None
    assert owner_of("kube-system/cilium-x7k2p") is None  # one generated suffix only: DaemonSet or Job, unsure


def test_five_hundred_identical_refusals_collapse_into_one_finding(lines: Any, log: Any) -> None:
    pods = log.pods_of("inflate", 5)
    items = [log.found(0, pods, others=5)]
    for i in range(500):
        claim = f"general-purpose-{i:05d}"
        items.append(log.created(10 * i + 1, claim, cpu="10250m", pods=15))
        items.append(log.selected(10 * i + 2, claim, "Standard_D16ls_v5"))
        items.append(log.quota_failed(10 * i + 3, claim, limit=20, usage=14, required=16, region="westus2"))
    report = report_of(lines(items))
    assert len(report.findings) == 1
    [finding] = report.findings
    assert finding.category == "regional-vcpu-quota" and finding.severity == BLOCKING
    assert finding.occurrences == 500
    assert finding.first_seen is not None and finding.last_seen is not None
    assert log.stamp(3) == finding.first_seen.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    assert (finding.last_seen - finding.first_seen).total_seconds() == 4990
    assert len(finding.nodeclaims) == 500
    assert finding.pod_count == 10
    assert finding.evidence_total > len(finding.evidence) == 100
    assert any("repeated 500 times" in d for d in finding.details)


def test_several_root_causes_get_one_finding_each_sorted_by_severity_then_pods(lines: Any, log: Any) -> None:
    big, small = log.pods_of("api", 8), log.pods_of("worker", 2)
    items = [
        log.found(0, big),
        log.created(1, "general-purpose-aaaaa"),
        log.selected(2, "general-purpose-aaaaa", "Standard_D8as_v5"),
        log.quota_failed(3, "general-purpose-aaaaa", name="standardDASv5Family", limit=100, usage=96, required=8),
        log.found(10, small),
        log.created(11, "general-purpose-bbbbb"),
        log.failed(12, "general-purpose-bbbbb", "SkuNotAvailable",
                   "The requested VM size for resource 'Following SKUs have failed for Capacity Restrictions: "
                   "Standard_D4s_v5' is currently not available in location 'eastus'."),
        log.found(20, small),
        log.created(21, "general-purpose-ccccc"),
        log.failed(22, "general-purpose-ccccc", "SubscriptionRequestsThrottled",
                   "Number of requests for subscription 'x' and operation 'y' exceeded the backend storage limit. "
                   "Please try again after '6' seconds.", status="429: 429 Too Many Requests"),
    ]
    report = report_of(lines(items))
    assert [(f.category, f.severity, f.pod_count) for f in report.findings] == [
        ("family-vcpu-quota", BLOCKING, 8),
        ("sku-not-available", BLOCKING, 2),
        ("throttled", WARNING, 2),
    ]


def test_quota_refusal_then_a_node_later_is_resolved_info(lines: Any, log: Any) -> None:
    pods = log.pods_of("inflate", 3)
    items = [
        log.found(0, pods),
        log.created(1, "general-purpose-aaaaa"),
        log.selected(2, "general-purpose-aaaaa", "Standard_D16ls_v5"),
        log.quota_failed(3, "general-purpose-aaaaa", required=16),
        log.found(600, pods),
        log.created(601, "general-purpose-bbbbb"),
        log.launched(604, "general-purpose-bbbbb"),
    ]
    report = report_of(lines(items))
    [finding] = report.findings
    assert finding.category == "regional-vcpu-quota"
    assert finding.severity == INFO and finding.resolved
    assert finding.resolved_at is not None and finding.last_seen is not None
    assert finding.resolved_at > finding.last_seen
    assert finding.pending_pods == []
    assert not report.blocking
    assert finding.summary.startswith("3 pods of default/inflate were Pending")


def test_a_node_first_then_a_refusal_stays_blocking(lines: Any, log: Any) -> None:
    pods = log.pods_of("inflate", 3)
    items = [
        log.found(0, pods),
        log.created(1, "general-purpose-aaaaa"),
        log.launched(4, "general-purpose-aaaaa"),
        log.found(600, pods),
        log.created(601, "general-purpose-bbbbb"),
        log.quota_failed(603, "general-purpose-bbbbb", required=16),
    ]
    [finding] = report_of(lines(items)).findings
    assert finding.severity == BLOCKING and not finding.resolved
    assert finding.pending_pods == pods


def test_one_claim_launching_does_not_resolve_pods_shared_with_a_failed_claim(lines: Any, log: Any) -> None:
    pods = log.pods_of("inflate", 6)
    items = [
        log.found(0, pods),
        log.created(1, "general-purpose-aaaaa"),
        log.created(1.5, "general-purpose-bbbbb"),
        log.launched(3, "general-purpose-aaaaa"),
        log.quota_failed(4, "general-purpose-bbbbb", required=16),
    ]
    [finding] = report_of(lines(items)).findings
    assert finding.severity == BLOCKING


def test_insufficient_capacity_after_a_traced_error_joins_that_finding(lines: Any, log: Any) -> None:
    pods = log.pods_of("inflate", 2)
    items = [
        log.found(0, pods),
        log.created(1, "general-purpose-aaaaa"),
        log.quota_failed(3, "general-purpose-aaaaa", required=16),
        log.v1("ERROR", 3.5, "failed launching nodeclaim", "nodeclaim.lifecycle",
               error="insufficient capacity, all requested instance types were unavailable during launch",
               **log.claim_of("general-purpose-aaaaa", "general-purpose")),
    ]
    report = report_of(lines(items))
    assert [f.category for f in report.findings] == ["regional-vcpu-quota"]
    assert {e.line for e in report.findings[0].evidence} >= {3, 4}


def test_the_same_failure_reported_twice_counts_once(lines: Any, log: Any) -> None:
    pods = log.pods_of("inflate", 2)
    items = [
        log.found(0, pods),
        log.created(1, "general-purpose-aaaaa"),
        log.quota_failed(3, "general-purpose-aaaaa", required=16),
        log.quota_failed(3.2, "general-purpose-aaaaa", required=16),
    ]
    [finding] = report_of(lines(items)).findings
    assert finding.occurrences == 1
    assert {e.line for e in finding.evidence} >= {3, 4}


def test_nominated_events_name_the_pods_of_a_claim(frame_of: Any) -> None:
    from datetime import UTC, datetime, timedelta

    t = datetime(2024, 1, 1, tzinfo=UTC)
    frame = frame_of([
        {"time": t, "source": "event", "event": "k8s.Nominated", "object_kind": "Pod", "object_name": "default/a-0",
         "message": "Pod should schedule on: nodeclaim/pool-x1"},
        {"time": t, "source": "event", "event": "k8s.Nominated", "object_kind": "Pod", "object_name": "default/a-1",
         "message": "Pod should schedule on: nodeclaim/pool-x1"},
        {"time": t + timedelta(seconds=1), "event": "nodeclaim.launch_failed", "level": "ERROR", "nodeclaim": "pool-x1",
         "error_code": "ZonalAllocationFailed", "zone": "eastus-2",
         "error_message": "Allocation failed. We do not have sufficient capacity for the requested VM size in this zone."},
    ])
    correlation = correlate(frame)
    assert correlation.claims["pool-x1"].pods == ["default/a-0", "default/a-1"]
    [occurrence] = correlation.occurrences
    assert occurrence.category == "zonal-allocation-failed" and occurrence.pod_count == 2


def test_pod_scheduled_event_resolves(frame_of: Any) -> None:
    from datetime import UTC, datetime, timedelta

    from diagnose.findings import InputStats

    t = datetime(2024, 1, 1, tzinfo=UTC)
    frame = frame_of([
        {"time": t, "event": "pod.unschedulable", "level": "ERROR", "pods": ["default/a-0"], "pod_count": 1,
         "message": "could not schedule pod", "error_message": 'all available instance types exceed limits for nodepool: "p"'},
        {"time": t + timedelta(minutes=5), "source": "event", "event": "k8s.Scheduled", "object_kind": "Pod",
         "object_name": "default/a-0", "message": "Successfully assigned default/a-0 to aks-p-abcde"},
    ])
    report = analyse(frame, InputStats(lines=2, parsed=2, repaired=0, unparsed=0, files=["f"]))
    [finding] = report.findings
    assert finding.category == "nodepool-limit" and finding.severity == INFO and finding.resolved
