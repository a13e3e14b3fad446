"""Live feeds without a cluster: log tails, the cluster reading turned into state, sim endpoints,
and the app's handling of a lost connection (shown, retried, never fatal)."""

from __future__ import annotations

import asyncio
import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from tui.app import KarpTui
from tui.sources.feed import FeedError, FeedUpdate
from tui.sources.kubeobjects import claims_from, pending_pods_from
from tui.sources.live import ClusterReading, LiveSource, LogTail, SourceUnavailable
from tui.sources.sim import open_sim
from tui.state import PendingPod, Snapshot
from tui.widgets.difftable import DiffTable

NOW = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)

POD = {
    "metadata": {"name": "inflate-74ccd665f4-79x4g", "namespace": "default", "creationTimestamp": "2026-11-29T17:58:00Z",
                 "ownerReferences": [{"kind": "ReplicaSet", "name": "inflate-74ccd665f4"}]},
    "spec": {"containers": [{"name": "pause", "resources": {"requests": {"cpu": "1", "memory": "256M"}}}]},
    "status": {"phase": "Pending", "nominatedNodeName": "general-purpose-pq7gl",
               "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                               "message": "0/3 nodes are available: 3 Insufficient cpu."}]},
}
CLAIM = {
    "metadata": {"name": "general-purpose-pq7gl", "creationTimestamp": "2026-11-29T17:58:01Z",
                 "labels": {"karpenter.sh/nodepool": "general-purpose", "node.kubernetes.io/instance-type": "Standard_D16ls_v5",
                            "karpenter.sh/capacity-type": "on-demand", "topology.kubernetes.io/zone": "westus2-1"}},
    "spec": {"resources": {"requests": {"cpu": "10250m", "memory": "2981280Ki", "pods": "15"}}},
    "status": {"conditions": [{"type": "Launched", "status": "False", "reason": "LaunchFailed",
                               "message": "quota exceeded", "lastTransitionTime": "2026-11-29T17:58:02Z"}]},
}


def test_log_tail_reads_only_complete_new_lines(tmp_path: Path, seed_path: str) -> None:
    lines = Path(seed_path).read_text().splitlines(keepends=True)
    target = tmp_path / "karp.log"
    target.write_text("".join(lines[:3]) + lines[3][:20])
    tail = LogTail(str(target))
    first = tail.read()
    assert first["line"].to_list() == [1, 2, 3]
    with target.open("a") as handle:
        handle.write(lines[3][20:] + "".join(lines[4:]))
    second = tail.read()
    assert second["line"].to_list() == list(range(4, 11))
    assert second.filter(second["line"] == 10)["error_code"].to_list() == ["OperationNotAllowed"]
    assert tail.read().height == 0
    assert LogTail(str(tmp_path / "missing.log")).read().height == 0


def test_kubernetes_objects_become_pods_and_claims() -> None:
    pods = pending_pods_from([POD, {**POD, "status": {"phase": "Running"}}])
    pod = pods["default/inflate-74ccd665f4-79x4g"]
    assert pod.workload == "Deployment default/inflate"
    assert (pod.cpu_m, pod.memory) == (1000, 256_000_000)
    assert pod.scheduler_reason.startswith("0/3 nodes")
    assert pod.nodeclaim == "general-purpose-pq7gl"
    claim = claims_from([CLAIM])["general-purpose-pq7gl"]
    assert (claim.nodepool, claim.instance_type, claim.vcpus, claim.capacity_type, claim.zone) == (
        "general-purpose", "Standard_D16ls_v5", 16, "on-demand", "westus2-1")
    assert claim.conditions["Launched"].status == "False" and claim.blocked
    assert claim.requests_cpu_m == 10250 and claim.requests_pods == 15


def test_live_source_reads_new_log_lines_once(seed_path: str) -> None:
    text = Path(seed_path).read_text()
    logs = {"karpenter/karpenter-0/controller": "\n".join(text.splitlines()[:5])}
    asked: list[int | None] = []

    def read(since_seconds: int | None) -> ClusterReading:
        asked.append(since_seconds)
        return ClusterReading(pods=[POD], nodeclaims=[CLAIM], logs=dict(logs))

    source = LiveSource(label="test", interval=1.0, cluster=read, clock=lambda: NOW)
    first = source.poll()
    assert len(first.records) == 5 and first.snapshot is not None
    assert first.snapshot.pods is not None and list(first.snapshot.pods) == ["default/inflate-74ccd665f4-79x4g"]
    logs["karpenter/karpenter-0/controller"] = "\n".join(text.splitlines()[3:])  # a window: lines 4-10
    second = source.poll()
    assert [r["line"] for r in second.records] == [6, 7, 8, 9, 10]
    assert second.findings is not None
    assert [f.category for f in second.findings] == ["regional-vcpu-quota"]
    assert asked == [None, 13]  # everything first, then the last 3 intervals + 10 s
    assert source.poll().records == []


def test_live_source_turns_layer_errors_into_feed_errors() -> None:
    def refuse(since_seconds: int | None) -> ClusterReading:
        raise ConnectionRefusedError("127.0.0.1:6443")

    with pytest.raises(FeedError, match="ConnectionRefusedError"):
        LiveSource(label="test", interval=1.0, cluster=refuse).poll()


def test_sim_endpoints_file(tmp_path: Path, seed_path: str) -> None:
    with pytest.raises(SourceUnavailable, match="no such endpoints file"):
        open_sim(str(tmp_path / "absent.json"), 1.0)
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(SourceUnavailable, match="cannot read it as JSON"):
        open_sim(str(bad), 1.0)
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    with pytest.raises(SourceUnavailable, match="names no kube, arm or logs"):
        open_sim(str(empty), 1.0)
    logs_only = tmp_path / "endpoints.json"
    logs_only.write_text(json.dumps({"logs": [seed_path]}))
    feed = open_sim(str(logs_only), 1.0)
    update = feed.poll()
    assert len(update.records) == 10 and feed.label.startswith("sim: ")


class FlakyFeed:
    """Fails its first poll, then serves a snapshot; says when it has been polled enough."""

    label = "live: test"
    interval = 0.01

    def __init__(self) -> None:
        self.polls = 0
        self.go = threading.Event()
        self.enough = threading.Event()

    def poll(self) -> FeedUpdate:
        self.go.wait(10)
        self.polls += 1
        if self.polls >= 3:
            self.enough.set()
        if self.polls == 1:
            raise FeedError("connection refused")
        pod = PendingPod("default/web-1", "Deployment default/web", NOW.replace(minute=0), 500, None, "Unschedulable")
        return FeedUpdate(snapshot=Snapshot(NOW, pods={pod.key: pod}), note="1 pending pod")

    def close(self) -> None:
        self.go.set()
        self.enough.set()


class FixedClock:
    def now(self) -> datetime:
        return NOW.replace(minute=2)


async def test_app_survives_lost_connection_and_shows_live_state() -> None:
    feed = FlakyFeed()
    app = KarpTui(feed=feed, clock=FixedClock())
    statuses: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        status = app.query_one("#status", Static)
        original = status.update

        def record(content: Any = "", **kwargs: Any) -> None:
            statuses.append(str(content))
            original(content, **kwargs)

        status.update = record  # type: ignore[method-assign]
        feed.go.set()
        assert await asyncio.to_thread(feed.enough.wait, 10)
        await pilot.pause()
        assert any("connection lost, retrying in" in s and s.endswith(": connection refused") for s in statuses)
        assert "connected 1 pending pod" in str(status.render())
        row = app.query_one("#pending-table", DiffTable).shown["default/web-1"]
        assert row[1] == "2m" and row[4] == "500m"
        await pilot.press("r")  # retry now: harmless while connected
        await pilot.press("q")
    assert feed.polls >= 3


def test_quota_reading_becomes_gauges() -> None:
    from provisioner.model.quota import QuotaSnapshot, QuotaUsage
    from tui.state import ClusterState
    from tui.views import gauges

    quota = QuotaSnapshot("westus2", NOW, "azure", {
        "cores": QuotaUsage("cores", 20, 14), "standardDLSv5Family": QuotaUsage("standardDLSv5Family", 100, 4),
        "lowPriorityCores": QuotaUsage("lowPriorityCores", 10, 0)})
    source = LiveSource(label="test", interval=1.0, quota=lambda: quota, clock=lambda: NOW)
    update = source.poll()
    assert update.snapshot is not None and update.snapshot.quota is quota
    assert "quota read 18:00:00" in update.note
    state = ClusterState()
    state.apply_snapshot(update.snapshot)
    shown = {g.name: (g.usage, g.limit, g.source, g.read_at) for g in gauges(state)}
    assert shown == {
        "cores": (14, 20, "azure", NOW),
        "standardDLSv5Family": (4, 100, "azure", NOW),
        "lowPriorityCores": (0, 10, "azure", NOW),
    }
