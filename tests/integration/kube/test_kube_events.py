"""EventRecorder against the emulator: dedup into count/series, message cap, rate limit, never raises."""

from __future__ import annotations

from provisioner.kube.cluster import KubeCluster
from provisioner.kube.connection import EVENTS
from provisioner.kube.events import MAX_MESSAGE, EventRecorder
from sim.kube.emulator import KubeEmulator

CLAIM = {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
         "metadata": {"name": "general-purpose-ev1", "uid": "11111111-2222-3333-4444-555555555555"}}


def _about(cluster: KubeCluster, name: str) -> list[dict]:
    return cluster.list_objects(EVENTS, "default", field_selector=f"involvedObject.name={name}")


def test_same_reason_and_object_within_the_window_aggregates(cluster: KubeCluster) -> None:
    recorder = EventRecorder(cluster.raw, dedup_window=120)
    try:
        for attempt in range(3):
            recorder.record(CLAIM, "Warning", "InsufficientCapacityError", f"NodeClaim general-purpose-ev1 event: attempt {attempt}")
        recorder.record(CLAIM, "Normal", "Launched", "Status condition transitioned, Type: Launched")
        assert recorder.flush(5)
        events = {e["reason"]: e for e in _about(cluster, "general-purpose-ev1")}
        assert set(events) == {"InsufficientCapacityError", "Launched"}
        warning = events["InsufficientCapacityError"]
        assert warning["count"] == 3 and warning["series"]["count"] == 3
        assert warning["message"].endswith("attempt 2")
        assert warning["source"]["component"] == "karpenter" and warning["reportingComponent"] == "karpenter"
        assert warning["involvedObject"]["kind"] == "NodeClaim" and warning["metadata"]["namespace"] == "default"
        assert recorder.stats.posted == 2 and recorder.stats.aggregated == 2
    finally:
        recorder.close()


def test_window_expiry_starts_a_new_event_and_long_messages_are_capped(cluster: KubeCluster) -> None:
    now = [0.0]
    recorder = EventRecorder(cluster.raw, dedup_window=120, clock=lambda: now[0])
    ref = {"kind": "Pod", "name": "inflate-abc", "namespace": "default", "uid": "u-1", "apiVersion": "v1"}
    try:
        recorder.record(ref, "Normal", "Nominated", "x" * 5000)
        assert recorder.flush(5)
        now[0] += 121
        recorder.record(ref, "Normal", "Nominated", "Pod should schedule on: nodeclaim/general-purpose-ev1")
        assert recorder.flush(5)
        events = _about(cluster, "inflate-abc")
        assert len(events) == 2
        assert max(len(e["message"]) for e in events) == MAX_MESSAGE
    finally:
        recorder.close()


def test_rate_limit_drops_and_failures_never_raise(kube: KubeEmulator, cluster: KubeCluster) -> None:
    now = [0.0]
    recorder = EventRecorder(cluster.raw, qps=1, burst=2, clock=lambda: now[0])
    try:
        for n in range(5):
            recorder.record({"kind": "Node", "name": f"rate-{n}"}, "Normal", "Tick", "t")
        assert recorder.flush(5)
        assert recorder.stats.posted == 2 and recorder.stats.dropped == 3
        kube.faults.fail(500, method="POST", path_contains="/events", count=1)
        now[0] += 10
        recorder.record({"kind": "Node", "name": "fails"}, "Warning", "Broken", "x")
        assert recorder.flush(5)
        assert recorder.stats.failed == 1
        kube.faults.fail(403, method="POST", path_contains="/events", count=1)
        recorder.record({"kind": "Node", "name": "forbidden"}, "Warning", "Broken", "x")
        assert recorder.flush(5)
        assert recorder.stats.failed == 2
    finally:
        recorder.close()
