"""The single wiring point for live sources: unavailable until provided, used once provided."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import provisioner.azure
import provisioner.kube
from diagnose.api import LiveOptions, Unavailable, connect_live, diagnose
from provisioner.model.quota import QuotaSnapshot, QuotaUsage

RULES_THROTTLED = Path(__file__).resolve().parents[3] / "fixtures" / "logs" / "rules" / "throttled.log"


def test_nothing_asked_nothing_connected() -> None:
    sources = connect_live(LiveOptions())
    assert sources.quota_source is None and sources.inputs == []


@pytest.mark.parametrize(
    ("options", "flag"),
    [
        (LiveOptions(azure=True), "--azure"),
        (LiveOptions(live=True), "--live"),
        (LiveOptions(kubeconfig="/tmp/kubeconfig"), "--live"),
    ],
)
def test_unavailable_names_the_flag(monkeypatch: pytest.MonkeyPatch, options: LiveOptions, flag: str) -> None:
    monkeypatch.delattr(provisioner.azure, "diagnose_quota_source", raising=False)
    monkeypatch.delattr(provisioner.kube, "diagnose_inputs", raising=False)
    with pytest.raises(Unavailable, match=f"^{flag}: .*not available yet"):
        connect_live(options)


class _Live:
    source = "azure"

    def read(self, region: str) -> QuotaSnapshot:
        return QuotaSnapshot(region, datetime(2026, 11, 29, tzinfo=UTC), "azure", {"cores": QuotaUsage("cores", 50, 14)})


def test_provided_azure_reader_is_used(monkeypatch: pytest.MonkeyPatch, log: Any) -> None:
    seen: dict[str, str] = {}

    def factory(**kwargs: str) -> _Live:
        seen.update(kwargs)
        return _Live()

    monkeypatch.setattr(provisioner.azure, "diagnose_quota_source", factory, raising=False)
    sources = connect_live(LiveOptions(azure=True, subscription="sub", location="westus2"))
    assert seen["subscription"] == "sub" and seen["location"] == "westus2"
    report = diagnose([str(log.SEED)], quota_source=sources.quota_source)
    assert report.quota_source == "azure"
    quota = report.findings[0].quota
    assert quota is not None and quota.live is not None and quota.live.limit == 50


def test_nominated_pods_join_the_batch_of_a_single_claim(frame_of: Any) -> None:
    from diagnose.correlate import correlate

    t = datetime(2024, 1, 1, tzinfo=UTC)
    frame = frame_of([
        {"time": t, "event": "pods.found", "pods": ["default/a-0", "default/a-1"], "pod_count": 4},
        {"time": t, "event": "nodeclaim.created", "nodeclaim": "p-1", "nodepool": "p"},
        {"time": t, "source": "event", "event": "k8s.Nominated", "object_kind": "Pod", "object_name": "default/a-2",
         "message": "Pod should schedule on: nodeclaim/p-1"},
    ])
    claim = correlate(frame).claims["p-1"]
    assert claim.pods == ["default/a-2", "default/a-0", "default/a-1"] and claim.pod_count == 4


def test_provided_cluster_reader_feeds_the_analysis(monkeypatch: pytest.MonkeyPatch, log: Any) -> None:
    def reader(**kwargs: str) -> list[tuple[str, list[str]]]:
        assert kwargs["namespace"] == "kube-system"
        return [("pod/karpenter-abc", log.SEED.read_text(encoding="utf-8").splitlines())]

    monkeypatch.setattr(provisioner.kube, "diagnose_inputs", reader, raising=False)
    sources = connect_live(LiveOptions(live=True, namespace="kube-system"))
    report = diagnose([], inputs=sources.inputs)
    assert report.input.files == ["pod/karpenter-abc"] and report.input.lines == 10
    assert [f.category for f in report.findings] == ["regional-vcpu-quota"]
    both = diagnose([str(RULES_THROTTLED)], inputs=sources.inputs)
    assert sorted(f.category for f in both.findings) == ["regional-vcpu-quota", "throttled"]
    assert both.input.lines == 10 + 5
