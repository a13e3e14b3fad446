"""The QuotaSource port: figures from the log, from a saved usages JSON, and in findings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from diagnose.api import diagnose
from diagnose.correlate import correlate
from diagnose.quota import LogQuotaSource, QuotaSource, SnapshotQuotaSource
from provisioner.model.errors import InputError


def test_log_source_reads_the_latest_figures_per_quota(lines: Any, log: Any) -> None:
    items = [
        log.found(0, log.pods_of("a", 2)),
        log.created(1, "p-aaaaa"),
        log.quota_failed(2, "p-aaaaa", usage=14, region="westus2"),
        log.created(10, "p-bbbbb"),
        log.quota_failed(11, "p-bbbbb", usage=16, region="westus2"),
    ]
    ingested = lines(items)
    source = LogQuotaSource(correlate(ingested.frame).occurrences)
    assert isinstance(source, QuotaSource)
    snapshot = source.read("westus2")
    assert snapshot.source == "log"
    cores = snapshot.get("cores")
    assert cores is not None and (cores.limit, cores.usage) == (20, 16)
    assert snapshot.read_at.second == 11
    assert source.read("eastus").items == {}


@pytest.mark.parametrize(
    "document",
    [
        [{"currentValue": "18", "limit": "40", "localName": "Total Regional vCPUs", "name": {"localizedValue":
          "Total Regional vCPUs", "value": "cores"}}],
        {"value": [{"currentValue": 18, "limit": 40, "name": {"value": "cores", "localizedValue": "Total Regional vCPUs"}}]},
        {"region": "westus2", "read_at": "2026-11-29T10:00:00Z", "items": {"cores": {"limit": 40, "usage": 18}}},
    ],
)
def test_snapshot_source_reads_every_form(tmp_path: Path, document: Any) -> None:
    path = tmp_path / "usage.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    snapshot = SnapshotQuotaSource(path).read("westus2")
    assert snapshot.source == "snapshot"
    cores = snapshot.get("cores")
    assert cores is not None and (cores.limit, cores.usage, cores.headroom) == (40, 18, 22)


def test_snapshot_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"quota snapshot .*missing\.json"):
        SnapshotQuotaSource(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{nope", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        SnapshotQuotaSource(bad)
    odd = tmp_path / "odd.json"
    odd.write_text('[{"name": {"value": "cores"}, "limit": "many", "currentValue": 1}]', encoding="utf-8")
    with pytest.raises(InputError, match=r"cores\.limit is not a number"):
        SnapshotQuotaSource(odd)


def test_snapshot_figures_appear_beside_the_logged_ones(tmp_path: Path, log: Any) -> None:
    path = tmp_path / "usage.json"
    path.write_text(json.dumps({"read_at": "2026-11-29T10:00:00Z", "items": {"cores": {"limit": 40, "usage": 14}}}))
    report = diagnose([str(log.SEED)], quota_source=SnapshotQuotaSource(path))
    [finding] = report.findings
    assert finding.quota is not None and finding.quota.live is not None
    assert (finding.quota.limit, finding.quota.live.limit) == (20, 40)
    assert report.quota_source == "snapshot"
    assert any("raised since" in d for d in finding.details)
    # the alternative is sized for the headroom the snapshot shows (26 vCPUs)
    assert any(a.vcpus > 6 for a in finding.alternatives)


def test_quota_request_uses_current_usage_when_read(tmp_path: Path, log: Any) -> None:
    path = tmp_path / "usage.json"
    path.write_text(json.dumps({"read_at": "2026-11-29T10:00:00Z", "items": {"cores": {"limit": 20, "usage": 18}}}))
    [finding] = diagnose([str(log.SEED)], quota_source=SnapshotQuotaSource(path)).findings
    assert "--limit-object value=34" in finding.fixes[0].command  # 18 in use now + 16 required
    assert "2 vCPUs" in finding.fixes[1].summary  # the alternative fits today's 2 vCPUs
    raised = tmp_path / "raised.json"
    raised.write_text(json.dumps({"items": {"cores": {"limit": 40, "usage": 14}}}))
    [finding] = diagnose([str(log.SEED)], quota_source=SnapshotQuotaSource(raised)).findings
    assert finding.fixes[0].kind == "retry" and finding.fixes[0].command == ""
