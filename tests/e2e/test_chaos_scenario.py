"""``karp-sim chaos``: faults from both emulators, leader crashes mid-launch, fail-overs; then the books."""

from __future__ import annotations

import json

import pytest

from sim.scenarios.chaos import KEYS, main


@pytest.mark.slow
def test_chaos_seeded_run_keeps_the_books(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json", "--seed", "3", "--duration", "20", "--kills", "3"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert tuple(figures) == KEYS
    print(figures)  # the figures, for the record (pytest -s)
    assert figures["seed"] == 3
    assert figures["restarts"] == 3 and figures["failovers"] == 3
    assert figures["faults_injected"] > 0 and figures["launches"] >= 5
    assert figures["leaked_vms"] == 0 and figures["leaked_nics"] == 0
    assert figures["duplicate_vms"] == 0 and figures["limit_breaches"] == 0
    assert figures["max_refusals_per_scope_per_ttl"] <= 1
    assert figures["pods_fitting_quota"] == 15 and figures["pods_running"] == figures["pods_fitting_quota"]


@pytest.mark.parametrize(("argv", "message"), [(["--duration", "1"], "--duration 1: must be at least 5 seconds"),
                                                (["--kills", "-1"], "--kills -1: must not be negative"),
                                                (["--log", "/no/such/dir/x.log"], "--log /no/such/dir/x.log: directory")])
def test_chaos_bad_options(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err
