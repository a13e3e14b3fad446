"""karp-diagnose --azure against the ARM emulator: live quota next to the figures the log recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnose.cli import main as diagnose_main
from sim.arm import ArmEmulator

SEED = str(Path(__file__).parents[3] / "fixtures" / "logs" / "seed-karpenter-2023-11-24.log")


def _args(arm: ArmEmulator) -> list[str]:
    info = arm.endpoint.as_dict()
    return ["--azure", "--subscription", info["subscription"], "--azure-endpoint", info["endpoint"],
            "--azure-ca", info["ca_cert"]]


def test_live_quota_beside_logged_quota(fresh: ArmEmulator, capsys: pytest.CaptureFixture[str]) -> None:
    fresh.reset(quotas={"cores": 40}, usages={"cores": 14})
    code = diagnose_main([*_args(fresh), "--format", "json", SEED])
    report = json.loads(capsys.readouterr().out)
    quota = report["findings"][0]["quota"]
    assert (quota["limit"], quota["usage"], quota["required"], quota["new_limit"]) == (20, 14, 16, 30)
    assert quota["source"] == "log" and quota["read_at"].startswith("2023-11-24T15:17:54")
    assert (quota["live"]["limit"], quota["live"]["usage"]) == (40, 14)
    assert quota["live"]["read_at"].startswith("20") and not quota["live"]["read_at"].startswith("2023")
    assert any("from Azure" in note for note in report["notes"])
    assert code in (0, 1)
    assert list(fresh.records("get_usages")), "the usages API was really called"


def test_live_quota_text_says_which_is_which(fresh: ArmEmulator, capsys: pytest.CaptureFixture[str]) -> None:
    fresh.reset(quotas={"cores": 20}, usages={"cores": 14})
    diagnose_main([*_args(fresh), SEED])
    out = capsys.readouterr().out
    assert "from the log's error text" in out
    assert "Azure usages API" in out and "limit 20, usage 14" in out


def test_denied_usages_still_prints_the_offline_findings(fresh: ArmEmulator, capsys: pytest.CaptureFixture[str]) -> None:
    fresh.deny("get_usages")
    code = diagnose_main([*_args(fresh), SEED])
    captured = capsys.readouterr()
    assert code == 1  # the offline finding is still blocking
    assert "Traceback" not in captured.err + captured.out
    assert "could not be read from Azure" in captured.out and "authorization" in captured.out.lower()
    assert "regional-vcpu-quota" in captured.out and "limit 20, usage 14" in captured.out


def test_missing_subscription_is_named(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("AZURE_SUBSCRIPTION_ID", raising=False)
    code = diagnose_main(["--azure", SEED])
    assert code == 2
    assert "--subscription" in capsys.readouterr().err
