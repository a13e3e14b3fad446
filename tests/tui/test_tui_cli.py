"""karp-tui's command line: help that teaches, one-line errors with exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.cli import main


def test_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "karp-tui fixtures/logs/seed-karpenter-2023-11-24.log" in out
    for flag in ("--events", "--live", "--kubeconfig", "--subscription", "--location", "--azure-endpoint",
                 "--azure-ca", "--sim"):
        assert flag in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "give log files to replay, or --live, or --sim"),
        (["a.log", "--live"], "exactly one of them"),
        (["/nonexistent/karp.log"], "/nonexistent/karp.log: no such file or directory"),
        (["-"], "karp-tui cannot read a log from stdin"),
        (["x.log", "--subscription", "s"], "--subscription only applies to --live"),
        (["--live", "--interval", "0"], "--interval must be a positive number"),
        (["--live", "--subscription", "s"], "give --subscription and --location together"),
        (["--live", "--subscription", "s", "--location", "westus2", "--azure-endpoint", "https://127.0.0.1:1",
          "--azure-ca", "/nonexistent/ca.pem"], "--azure-ca /nonexistent/ca.pem: no such file"),
    ],
)
def test_errors_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_sim_without_endpoints_file(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KARP_SIM_ENDPOINTS", str(tmp_path / "endpoints.json"))
    assert main(["--sim"]) == 2
    assert "no such endpoints file; is karp-sim running?" in capsys.readouterr().err
