"""``karp-sim demo`` end to end in both modes (both emulators, the real Azure SDK clients)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.scenarios.demo import main


@pytest.mark.slow
def test_demo_quota_aware_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "qa.log"
    assert main(["--json", "--log", str(log)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert set(summary) == {"mode", "pods", "nodes_created", "vm_create_attempts", "quota_errors", "log", "findings"}
    assert summary["mode"] == "quota-aware"
    assert summary["quota_errors"] == 0  # Azure refuses no create at all
    assert summary["nodes_created"] >= 1 and summary["vm_create_attempts"] == summary["nodes_created"]
    assert summary["pods"]["running"] >= 1 and summary["pods"]["running"] + summary["pods"]["pending"] == 20
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    blocked = [r for r in lines if r["event"] == "quota.blocked"]
    assert blocked and blocked[0]["quota"]["name"] == "cores" and blocked[0]["quota"]["limit"] == 20
    assert blocked[0]["quota"]["usage"] == 14 and blocked[0]["quota"]["newLimit"] > 20
    assert not any(r["event"] == "nodeclaim.launch_failed" for r in lines)


@pytest.mark.slow
def test_demo_karpenter_mode_repeats_the_409(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "k.log"
    assert main(["--mode", "karpenter", "--json", "--log", str(log)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["mode"] == "karpenter"
    assert summary["quota_errors"] >= 2 and summary["nodes_created"] == 0
    assert summary["pods"]["running"] == 0
    failed = [json.loads(x) for x in log.read_text().splitlines() if '"nodeclaim.launch_failed"' in x]
    assert failed[0]["quota"] == {"scope": "regional", "name": "cores", "region": "westus2", "limit": 20,
                                  "usage": 14, "required": 16, "newLimit": 30}
    if summary["findings"]:
        assert "regional-vcpu-quota" in {f["category"] for f in summary["findings"]}


def test_demo_bad_log_directory(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--log", "/no/such/dir/x.log"]) == 2
    assert "--log" in capsys.readouterr().err
