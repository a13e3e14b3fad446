"""karp-diagnose --live against the cluster emulator: controller logs and Events read through the
official client, diagnosed as files would be."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from diagnose.cli import main as diagnose_main
from sim.kube.emulator import KubeEmulator

SEED = Path(__file__).parents[3] / "fixtures" / "logs" / "seed-karpenter-2023-11-24.log"


@pytest.fixture(scope="module")
def cluster_with_karpenter() -> Iterator[KubeEmulator]:
    with KubeEmulator(nodes=3, node_ready_delay=0.05, node_gone_delay=0.05, tick=0.05) as kube:
        kube.create("pods", {"metadata": {"name": "karpenter-5d8f7-x2x9k", "namespace": "karpenter",
                                          "labels": {"app.kubernetes.io/name": "karpenter"}},
                             "spec": {"containers": [{"name": "controller", "image": "karpenter"}]}})
        kube.set_pod_log("karpenter", "karpenter-5d8f7-x2x9k", "controller", SEED.read_text(encoding="utf-8"))
        kube.create("events", {
            "metadata": {"name": "inflate-74ccd665f4-79x4g.1", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": "inflate-74ccd665f4-79x4g"},
            "reason": "Nominated", "type": "Normal", "source": {"component": "karpenter"},
            "message": "Pod should schedule on: nodeclaim/general-purpose-pq7gl",
            "firstTimestamp": "2023-11-24T15:17:48Z", "lastTimestamp": "2023-11-24T15:17:48Z", "count": 1,
        })
        assert kube.wait_idle(5)
        yield kube


def test_live_reads_controller_logs_and_events(cluster_with_karpenter: KubeEmulator,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    code = diagnose_main(["--live", "--kubeconfig", cluster_with_karpenter.kubeconfig, "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert report["input"]["events"] >= 1, "the Events were read as Events, not as log lines"
    assert report["input"]["repaired"] == 1 and report["input"]["parsed"] == 9
    [finding] = [f for f in report["findings"] if f["category"] == "regional-vcpu-quota"]
    assert finding["nodeclaims"] == ["general-purpose-pq7gl"]
    assert (finding["quota"]["limit"], finding["quota"]["usage"], finding["quota"]["new_limit"]) == (20, 14, 30)
    assert any(e["file"].startswith("karpenter/karpenter-5d8f7-x2x9k") for e in finding["evidence"])


def test_live_without_karpenter_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    with KubeEmulator(nodes=1, tick=0.05) as bare:
        code = diagnose_main(["--live", "--kubeconfig", bare.kubeconfig])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "karpenter" in err.lower()
