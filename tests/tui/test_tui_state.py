"""ClusterState folded from the founding log and from Kubernetes Events and snapshots."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from provisioner.model.quota import QuotaSnapshot, QuotaUsage
from tui.sources.replay import Timeline
from tui.state import ClaimState, ClusterState, PendingPod, Snapshot, workload_of
from tui.views import claim_rows, format_age, gauges, log_matches, pending_groups, pending_rows

T0 = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)


def test_seed_log_pending_pods_grouped(seed_timeline: Callable[..., Timeline]) -> None:
    timeline = seed_timeline()
    state = timeline.state_at(len(timeline))
    assert len(state.pods) == 5
    assert state.counted == {"Deployment default/inflate": 5}
    groups = pending_groups(state)
    assert [(g.workload, g.cause, g.named, g.counted) for g in groups] == [
        ("Deployment default/inflate", "regional-vcpu-quota", 5, 5)
    ]
    assert all(p.nodeclaim == "general-purpose-pq7gl" for p in state.pods.values())


def test_seed_log_nodeclaim_and_quota(seed_timeline: Callable[..., Timeline]) -> None:
    timeline = seed_timeline()
    state = timeline.state_at(len(timeline))
    claim = state.claims["general-purpose-pq7gl"]
    assert (claim.nodepool, claim.instance_type, claim.vcpus) == ("general-purpose", "Standard_D16ls_v5", 16)
    assert claim.conditions["Launched"].status == "False"
    assert claim.last_error_code == "OperationNotAllowed"
    assert "Total Regional Cores quota" in claim.last_error
    regional = next(g for g in gauges(state) if g.name == "cores")
    assert (regional.usage, regional.limit, regional.demand_vcpus, regional.demand_pods) == (14, 20, 16, 10)
    assert regional.source == "log" and regional.read_at == timeline.time_at(len(timeline))
    names = [g.name for g in gauges(state)]
    assert names == ["cores", "standardDLSv5Family", "lowPriorityCores"]


def test_timeline_moves_back_and_forth(seed_timeline: Callable[..., Timeline]) -> None:
    timeline = seed_timeline()
    assert len(timeline) == 10
    early = timeline.state_at(1)
    assert len(early.pods) == 5 and not early.claims
    assert pending_groups(early)[0].cause == "waiting"
    assert timeline.state_at(3).claims["general-purpose-pq7gl"].conditions["Launched"].status == "Unknown"
    assert timeline.state_at(10).claims["general-purpose-pq7gl"].blocked
    again = timeline.state_at(2)
    assert not again.claims and len(again.log) == 2
    assert timeline.delay_after(9) > 0.5  # 15:17:53.943 -> 15:17:54.619
    assert timeline.time_at(0) is None


def test_kubernetes_events_update_pods() -> None:
    state = ClusterState()
    state.apply({"source": "event", "time": T0, "reason": "FailedScheduling", "object_kind": "Pod",
                 "object_name": "shop/web-0", "message": "0/3 nodes are available: 3 Insufficient cpu."})
    state.apply({"source": "event", "time": T0, "reason": "Nominated", "object_kind": "Pod",
                 "object_name": "shop/web-0", "message": "Pod should schedule on: nodeclaim/default-abcde"})
    pod = state.pods["shop/web-0"]
    assert pod.workload == "StatefulSet shop/web"
    assert pod.scheduler_reason.startswith("0/3 nodes")
    assert pod.nodeclaim == "default-abcde"
    state.apply({"source": "event", "time": T0, "reason": "Scheduled", "object_kind": "Pod", "object_name": "shop/web-0"})
    assert state.pods == {}


def test_claim_lifecycle_clears_block() -> None:
    state = ClusterState()
    state.apply({"event": "nodeclaim.launch_failed", "nodeclaim": "a", "time": T0, "level": "ERROR",
                 "error_code": "AllocationFailed", "category": "allocation-failed", "error_message": "no capacity"})
    assert state.claims["a"].blocked
    for event in ("nodeclaim.launched", "nodeclaim.registered", "nodeclaim.initialized"):
        state.apply({"event": event, "nodeclaim": "a", "time": T0, "node": "aks-a"})
    claim = state.claims["a"]
    assert not claim.blocked and claim.node == "aks-a"
    assert claim_rows(state, T0)["a"][6:9] == ("True", "True", "True")
    state.apply({"event": "nodeclaim.deleted", "nodeclaim": "a", "time": T0})
    assert state.claims == {}


def test_snapshot_replaces_pods_claims_and_quota() -> None:
    state = ClusterState()
    pods = {"default/x-1": PendingPod("default/x-1", "Job default/x", T0, 500, 2**30, "Unschedulable", "", "")}
    quota = QuotaSnapshot("westus2", T0, "azure", {"cores": QuotaUsage("cores", 100, 40),
                                                  "standardDLSv5Family": QuotaUsage("standardDLSv5Family", 50, 8)})
    state.apply_snapshot(Snapshot(T0, pods=pods, claims={"c": ClaimState("c", instance_type="Standard_D4ls_v5")},
                                  quota=quota))
    rows = pending_rows(state, T0.replace(minute=3))
    assert rows["default/x-1"][1] == "3m" and rows["default/x-1"][4] == "500m/1Gi"
    family = next(g for g in gauges(state) if g.name == "standardDLSv5Family")
    assert (family.usage, family.limit, family.source, family.headroom) == (8, 50, "azure", 42)
    assert state.region == "westus2"


def test_workload_and_age_formatting() -> None:
    assert workload_of("default/inflate-74ccd665f4-79x4g") == "Deployment default/inflate"
    assert workload_of("default/standalone") == "Pod default/standalone"
    assert format_age(T0, T0.replace(second=59)) == "59s"
    assert format_age(T0, T0.replace(hour=21)) == "3h"
    assert format_age(None, T0) == "-"


def test_log_filter_matching(seed_timeline: Callable[..., Timeline]) -> None:
    timeline = seed_timeline()
    log = timeline.state_at(len(timeline)).log
    assert sum(log_matches(r, "ERROR", "", "") for r in log) == 1
    assert sum(log_matches(r, "DEBUG", "provisioner", "") for r in log) == 3
    assert sum(log_matches(r, "DEBUG", "", "network interface") for r in log) == 2


def test_checkpoints_give_the_same_state_as_folding_again(
    seed_timeline: Callable[..., Timeline], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui.sources import replay

    monkeypatch.setattr(replay, "CHECKPOINT", 3)
    timeline = seed_timeline()
    timeline.state_at(10)
    for position in (7, 3, 5, 1, 10, 4):
        state = timeline.state_at(position)
        fresh = seed_timeline().state_at(position)
        assert len(state.log) == len(fresh.log) == position
        assert state.log_at.keys() == fresh.log_at.keys()
        assert pending_rows(state, state.time) == pending_rows(fresh, fresh.time)
        assert claim_rows(state, state.time) == claim_rows(fresh, fresh.time)
        assert gauges(state) == gauges(fresh)


def test_replay_with_an_events_dump(seed_path: str) -> None:
    from pathlib import Path

    from tui.sources.replay import load_frame

    events = str(Path(seed_path).parents[1] / "events" / "kubectl-get-events-2023-11-24.json")
    timeline = Timeline(*load_frame([seed_path], [events]))
    state = timeline.state_at(len(timeline))
    assert state.pods["default/inflate-74ccd665f4-79x4g"].scheduler_reason.startswith("0/3 nodes are available")
    assert state.pods["default/inflate-74ccd665f4-mx7q9"].nodeclaim == "general-purpose-pq7gl"
    other = state.claims["general-purpose-zz8kq"]
    assert other.conditions["Launched"].status == "False"
    assert other.category == "insufficient-capacity"
    assert claim_rows(state, state.time)["general-purpose-pq7gl"][6] == "False OperationNotAllowed"


def test_only_families_in_use_get_a_gauge() -> None:
    quota = QuotaSnapshot("westus2", T0, "azure", {
        "cores": QuotaUsage("cores", 100, 24),
        "standardDSv5Family": QuotaUsage("standardDSv5Family", 50, 8),  # VMs run on it
        "standardFSv2Family": QuotaUsage("standardFSv2Family", 50, 0),  # nothing uses it
        "standardDLSv5Family": QuotaUsage("standardDLSv5Family", 50, 0),  # a NodeClaim wants it
        "lowPriorityCores": QuotaUsage("lowPriorityCores", 10, 0),
    })
    state = ClusterState()
    state.apply_snapshot(Snapshot(T0, claims={"c": ClaimState("c", instance_type="Standard_D16ls_v5")}, quota=quota))
    assert [g.name for g in gauges(state)] == ["cores", "standardDLSv5Family", "standardDSv5Family", "lowPriorityCores"]
