"""karp-tui's live feed against the Kubernetes emulator: the founding cluster, read for real
through provisioner.kube (official client, real HTTP on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sim.kube.emulator import KubeEmulator
from sim.scenarios.founding import seed_cluster, set_replicas
from tui.sources.live import LiveSource, kube_reader
from tui.state import ClusterState

NOW = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def kube() -> Iterator[KubeEmulator]:
    with KubeEmulator(node_ready_delay=0.05, node_gone_delay=0.05, tick=0.05, bookmark_interval=0.2) as emulator:
        yield emulator


def _pending(kube: KubeEmulator) -> int:
    return sum(1 for p in kube.objects("pods", "default") if not (p.get("spec") or {}).get("nodeName"))


def test_live_feed_reads_founding_cluster(kube: KubeEmulator, seed_path: str) -> None:
    seed_cluster(kube)
    set_replicas(kube, 10)
    assert kube.wait_idle(10)
    assert _pending(kube) == 10
    controller = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "karpenter-5d8b7c6f9-abcde", "namespace": "karpenter",
                     "labels": {"app.kubernetes.io/name": "karpenter"}},
        "spec": {"containers": [{"name": "controller", "image": "karpenter"}],
                 "tolerations": [{"operator": "Exists"}]},
    }
    kube.create("pods", controller, "karpenter")
    kube.set_pod_log("karpenter", "karpenter-5d8b7c6f9-abcde", "controller", Path(seed_path).read_text())

    feed = LiveSource(label="live: test", interval=1.0, cluster=kube_reader(kube.kubeconfig, None, "karpenter"),
                      clock=lambda: NOW)
    update = feed.poll()
    assert update.snapshot is not None and update.snapshot.pods is not None
    inflate = [k for k in update.snapshot.pods if k.startswith("default/inflate-")]
    assert len(inflate) == 10
    pod = update.snapshot.pods[inflate[0]]
    assert pod.workload == "Deployment default/inflate"
    assert (pod.cpu_m, pod.memory) == (1000, 256_000_000)
    assert "Insufficient" in pod.scheduler_reason or "untolerated taint" in pod.scheduler_reason
    logged = [r for r in update.records if r["source"] == "log"]
    events = [r for r in update.records if r["source"] == "event"]
    assert len(logged) == 10  # the controller's log, read once
    assert any(r["reason"] == "FailedScheduling" and (r["object_name"] or "").startswith("default/inflate-")
               for r in events)
    assert update.findings is not None and [f.category for f in update.findings] == ["regional-vcpu-quota"]

    state = ClusterState()
    state.apply_many(update.records)
    state.apply_snapshot(update.snapshot)
    assert len(state.pods) == 10 and not state.counted  # the cluster's own list replaces the log's count
    assert state.claims == {}  # the emulator has no NodeClaim: the log's claim is not live

    assert all(state.pods[k].scheduler_reason for k in inflate)

    again = feed.poll()
    assert [r for r in again.records if r["source"] == "log"] == []  # nothing new in the log
    assert [r for r in again.records if r["source"] == "event"] == []  # Events are not repeated


def test_sim_feed_reads_quota_from_the_arm_emulator_and_follows_the_log(tmp_path: Path, seed_path: str) -> None:
    import json

    from sim.arm import ArmEmulator
    from tui.sources.sim import open_sim
    from tui.views import gauges

    log = tmp_path / "karp-provisioner.log"
    lines = Path(seed_path).read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:5]))
    with ArmEmulator(location="westus2", quotas={"cores": 20}, usages={"cores": 14}) as arm:
        endpoints = tmp_path / "endpoints.json"
        endpoints.write_text(json.dumps({"arm": arm.endpoint.as_dict(), "logs": [str(log)]}))
        feed = open_sim(str(endpoints), 1.0)
        first = feed.poll()
        assert len(first.records) == 5
        assert first.snapshot is not None and first.snapshot.quota is not None
        assert first.snapshot.quota.source == "azure"
        with log.open("a") as handle:
            handle.write("".join(lines[5:]))
        second = feed.poll()
    assert [r["line"] for r in second.records] == [6, 7, 8, 9, 10]
    state = ClusterState()
    for update in (first, second):
        state.apply_many(update.records)
        assert update.snapshot is not None
        state.apply_snapshot(update.snapshot)
    regional = next(g for g in gauges(state) if g.name == "cores")
    assert (regional.usage, regional.limit, regional.source) == (14, 20, "azure")
    assert (regional.demand_vcpus, regional.demand_pods) == (16, 10)
    assert second.findings is not None
    quota = second.findings[0].quota
    assert quota is not None and quota.live is not None and (quota.live.limit, quota.live.usage) == (20, 14)
