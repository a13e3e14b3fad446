"""Metrics from log records and samples, and the probe/scrape endpoints over HTTP."""

from __future__ import annotations

import urllib.error
import urllib.request
from datetime import UTC, datetime

from provisioner.model.quota import QuotaSnapshot, QuotaUsage
from provisioner.observability.health import Endpoints, run_checks
from provisioner.observability.logwriter import LogWriter
from provisioner.observability.metrics import Metrics, Sample, claim_state

T0 = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)


def value(metrics: Metrics, name: str, labels: dict[str, str] | None = None) -> float | None:
    return metrics.registry.get_sample_value(name, labels or {})


def test_counters_follow_the_log() -> None:
    metrics = Metrics()
    log = LogWriter(level="ERROR")  # counted whatever the level written
    log.subscribe(metrics.observe)
    log.log("plan.computed", nodeclaims=2, pods=7)
    log.log("nodeclaim.created", name="gp-a", NodePool={"name": "gp"})
    log.log("nodeclaim.launched", name="gp-a")
    log.log("nodeclaim.launch_failed", name="gp-b", reason="SubscriptionQuotaReached", **{"error.code": "OperationNotAllowed"})
    log.log("nodeclaim.launch_failed", name="gp-c", reason="AllocationFailure", **{"error.code": "AllocationFailed"})
    log.log("nodeclaim.launch_failed", name="gp-d", message="could not update nodeclaim status", error="x")
    log.log("nodeclaim.launch_timeout", name="gp-e", reason="LaunchTimeout")
    log.log("gc.vm_deleted", vm="aks-x", reason="no nodeclaim")
    log.log("gc.nic_deleted", nic="aks-x")
    log.log("disruption.started", reason="Empty")
    log.log("leader.acquired", identity="a")
    assert value(metrics, "karp_pods_provisioned_total") == 7
    assert value(metrics, "karp_nodeclaims_created_total", {"nodepool": "gp"}) == 1
    assert value(metrics, "karp_nodeclaims_launched_total") == 1
    assert value(metrics, "karp_nodeclaims_launch_failures_total", {"code": "OperationNotAllowed"}) == 1
    assert value(metrics, "karp_nodeclaims_launch_failures_total", {"code": "AllocationFailed"}) == 1
    assert value(metrics, "karp_nodeclaims_timeouts_total", {"reason": "LaunchTimeout"}) == 1
    assert value(metrics, "karp_garbage_collected_total", {"kind": "vm"}) == 1
    assert value(metrics, "karp_garbage_collected_total", {"kind": "nic"}) == 1
    assert value(metrics, "karp_disruptions_total", {"reason": "Empty"}) == 1
    assert value(metrics, "karp_leader_transitions_total") == 1


def test_gauges_from_a_sample() -> None:
    metrics = Metrics()
    quota = QuotaSnapshot("westus2", T0, "azure", {"cores": QuotaUsage("cores", 20, 14),
                                                   "standardDSv5Family": QuotaUsage("standardDSv5Family", 100, 8)})
    metrics.update(Sample(pods_pending=4, claims={"launching": 2, "initialized": 3}, quota=quota, leader=True,
                          passes=1, last_pass_seconds=0.02))
    metrics.update(Sample(pods_pending=4, quota=quota, leader=True, passes=1, last_pass_seconds=9.0))  # same pass
    assert value(metrics, "karp_pods_pending") == 4 and value(metrics, "karp_leader") == 1
    assert value(metrics, "karp_nodeclaims", {"state": "initialized"}) == 0  # the second sample had none
    assert value(metrics, "karp_quota_headroom_vcpus", {"scope": "regional", "quota": "cores"}) == 6
    assert value(metrics, "karp_quota_limit_vcpus", {"scope": "family", "quota": "standardDSv5Family"}) == 100
    assert value(metrics, "karp_scheduling_duration_seconds_count") == 1
    assert value(metrics, "karp_scheduling_duration_seconds_sum") == 0.02


def test_claim_states() -> None:
    assert claim_state({}, False) == "launching"
    assert claim_state({"Launched": "True"}, False) == "launched"
    assert claim_state({"Launched": "True", "Registered": "True"}, False) == "registered"
    assert claim_state({"Launched": "True", "Registered": "True", "Initialized": "True"}, False) == "initialized"
    assert claim_state({"Launched": "False"}, False) == "failed"
    assert claim_state({"Launched": "True"}, True) == "deleting"


def _get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.read().decode(), answer.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), e.headers.get("Content-Type", "")


def test_endpoints_answer_probes_and_scrapes() -> None:
    ready = [False]

    def broken() -> bool:
        raise RuntimeError("no view")

    metrics = Metrics()
    metrics.update(Sample(pods_pending=3))
    endpoints = Endpoints("127.0.0.1", 0, health={"loops": lambda: True}, ready={"informers": lambda: ready[0]},
                          metrics=metrics).start()
    try:
        assert _get(endpoints.url + "/healthz")[:2] == (200, "ok\n")
        status, body, _ = _get(endpoints.url + "/readyz")
        assert status == 503 and body == "informers: failing\n"
        ready[0] = True
        assert _get(endpoints.url + "/readyz")[0] == 200
        status, body, content_type = _get(endpoints.url + "/metrics")
        assert status == 200 and "karp_pods_pending 3.0" in body and content_type.startswith("text/plain")
        assert _get(endpoints.url + "/nope")[0] == 404
    finally:
        endpoints.stop()
    assert run_checks({"broken": broken}) == (False, "broken: RuntimeError: no view\n")
