"""``provisioner.kube.live.collect`` against the emulator: what karp-diagnose --live reads."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from provisioner.kube.live import NotInstalled, collect
from provisioner.model.kube_port import Forbidden
from sim.kube.emulator import KubeEmulator

LOG_LINE = json.dumps({"level": "ERROR", "time": "2026-11-29T10:00:00.000Z", "logger": "controller",
                       "message": "failed launching nodeclaim", "NodeClaim": {"name": "general-purpose-live1"}})


@pytest.fixture(scope="module")
def live(kube: KubeEmulator) -> Iterator[KubeEmulator]:
    for replica in ("karpenter-7d9f-abc", "karpenter-7d9f-def"):
        kube.create("pods", {"metadata": {"name": replica, "namespace": "karpenter", "labels": {"app.kubernetes.io/name": "karpenter"}},
                             "spec": {"containers": [{"name": "controller", "image": "karpenter"}]}})
        kube.set_pod_log("karpenter", replica, "controller", LOG_LINE + "\n")
    kube.set_pod_log("karpenter", "karpenter-7d9f-def", "controller", "previous run\n", previous=True)
    kube.create("nodeclaims", {"metadata": {"name": "general-purpose-live1"}, "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"}, "requirements": []},
                               "status": {"conditions": [{"type": "Launched", "status": "False", "reason": "LaunchFailed", "message": "quota"}]}})
    kube.create("pods", {"metadata": {"name": "inflate-live", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "64"}}}]}})
    assert kube.wait_idle(5)
    kube.store.mutate(kube.kind("pods"), "karpenter", "karpenter-7d9f-def",
                      lambda p: p["status"]["containerStatuses"][0].__setitem__("restartCount", 1), "status")
    yield kube


def test_collect_finds_logs_pending_pods_nodeclaims_and_events(live: KubeEmulator) -> None:
    found = collect(live.kubeconfig, None)
    assert set(found.logs) == {"karpenter/karpenter-7d9f-abc/controller", "karpenter/karpenter-7d9f-def/controller",
                               "karpenter/karpenter-7d9f-def/controller/previous"}
    assert found.logs["karpenter/karpenter-7d9f-abc/controller"].strip() == LOG_LINE
    assert found.logs["karpenter/karpenter-7d9f-def/controller/previous"] == "previous run\n"
    assert "inflate-live" in {p["metadata"]["name"] for p in found.pending_pods}
    claim = next(c for c in found.nodeclaims if c["metadata"]["name"] == "general-purpose-live1")
    assert claim["status"]["conditions"][0]["reason"] == "LaunchFailed"
    failed = [e for e in found.events if e["reason"] == "FailedScheduling" and e["involvedObject"]["name"] == "inflate-live"]
    assert failed and failed[0]["source"]["component"] == "default-scheduler"
    assert {"metadata", "involvedObject", "reason", "message", "type", "count", "lastTimestamp"} <= set(failed[0])


def test_collect_with_selector_and_context(live: KubeEmulator) -> None:
    found = collect(live.kubeconfig, "karp-sim", selector="app.kubernetes.io/name=karpenter", since_seconds=3600)
    assert len(found.controller_pods) == 2


def test_refused_permission_names_verb_and_resource(live: KubeEmulator) -> None:
    live.faults.fail(403, method="GET", path_contains="/log", count=1)
    with pytest.raises(Forbidden) as info:
        collect(live.kubeconfig, None)
    assert info.value.verb == "get" and info.value.resource == "pods/log" and info.value.namespace == "karpenter"


def test_cluster_without_karpenter_says_so() -> None:
    with KubeEmulator(crds=[]) as bare, pytest.raises(NotInstalled, match="no Karpenter or karp-provisioner"):
        collect(bare.kubeconfig, None)


def test_diagnose_inputs_lists_logs_previous_first_then_events(live: KubeEmulator) -> None:
    import provisioner.kube

    inputs = provisioner.kube.diagnose_inputs(kubeconfig=live.kubeconfig, namespace="karpenter")
    names = [name for name, _ in inputs]
    assert names == ["karpenter/karpenter-7d9f-abc/controller", "karpenter/karpenter-7d9f-def/controller/previous",
                     "karpenter/karpenter-7d9f-def/controller", "events"]
    assert dict(inputs)["karpenter/karpenter-7d9f-abc/controller"] == [LOG_LINE]
    assert any('"FailedScheduling"' in line for line in dict(inputs)["events"])
