"""Summarised correlation: the routine rows accounted for in polars give the same reports as the full walk."""

from __future__ import annotations

import importlib.util
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from diagnose import api
from diagnose.correlate import _relevant, correlate
from diagnose.ingest import load
from diagnose.render.json import report_to_json
from diagnose.routine import split
from diagnose.rules import evaluate

ROOT = Path(__file__).resolve().parents[3]
LOGS = sorted((ROOT / "fixtures" / "logs").glob("*.log")) + sorted((ROOT / "fixtures" / "logs" / "rules").glob("*.log"))
NOW = datetime(2026, 11, 29, tzinfo=UTC)


def _full_walk_report(paths: list[str], events: list[str] = ()) -> str:  # type: ignore[assignment]
    """The reference: every row loaded, every relevant row walked in Python."""
    loaded = load(paths, list(events))
    original = api.correlate
    api.correlate = lambda frame, summarise=False: original(frame, summarise=False)  # type: ignore[assignment]
    try:
        report = api.analyse(loaded.frame, loaded.stats, now=NOW)
    finally:
        api.correlate = original
    return json.dumps(report_to_json(report), sort_keys=True, default=str)


def _karp_diagnose_report(paths: list[str], events: list[str] = ()) -> str:  # type: ignore[assignment]
    """What karp-diagnose does: lean ingest, routine rows summarised."""
    report = api.diagnose(paths, list(events), now=NOW)
    return json.dumps(report_to_json(report), sort_keys=True, default=str)


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_every_fixture_log_gives_the_same_report(path: Path) -> None:
    assert _karp_diagnose_report([str(path)]) == _full_walk_report([str(path)])


def test_logs_with_events_give_the_same_report() -> None:
    events = sorted(str(p) for p in (ROOT / "fixtures" / "events").glob("*.json"))
    assert events
    logs = [str(ROOT / "fixtures" / "logs" / "seed-karpenter-2023-11-24.log")]
    assert _karp_diagnose_report(logs, events) == _full_walk_report(logs, events)


def _loggen() -> Any:
    spec = importlib.util.spec_from_file_location("loggen", ROOT / "bench" / "loggen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_big_log_gives_the_same_report_walking_a_fraction(tmp_path: Path) -> None:
    path = tmp_path / "generated.log"
    _loggen().generate(path, 3 << 20, seed=11)
    full = _full_walk_report([str(path)])
    assert json.loads(full)["findings"]
    assert _karp_diagnose_report([str(path)]) == full
    relevant = _relevant(load([str(path)]).frame)
    walked, summary = split(relevant)
    assert walked.height < relevant.height  # (a small file: the incidents are most of it)
    assert summary.nodepool_success and summary.first is not None and summary.last is not None


def test_a_routine_claim_later_getting_the_pods_a_node_resolves_the_finding(lines: Any, log: Any) -> None:
    pods = log.pods_of("inflate", 3)
    items = [
        log.found(0, pods),
        log.created(1, "general-purpose-aaaaa"),
        log.quota_failed(2, "general-purpose-aaaaa"),
        *[log.found(10 + i, log.pods_of(f"other{i}", 2)) for i in range(3)],
        log.found(30, pods),
        log.created(31, "general-purpose-bbbbb"),  # routine: created, launched, nothing else
        log.launched(32, "general-purpose-bbbbb"),
        log.found(40, log.pods_of("late", 1)),
        log.created(41, "batch-ccccc", pool="batch"),
        log.launched(42, "batch-ccccc", pool="batch"),
    ]
    ingested = lines(items)
    relevant = _relevant(ingested.frame)
    walked, summary = split(relevant)
    assert "general-purpose-bbbbb" not in walked["nodeclaim"].to_list()
    assert summary.pod_bound == {pod: log.T0.replace(second=32) for pod in pods}
    assert sorted(summary.nodepool_success) == ["batch", "general-purpose"]
    full, summarised = correlate(ingested.frame), correlate(ingested.frame, summarise=True)
    assert {p: summarised.pod_bound[p] for p in pods} == {p: full.pod_bound[p] for p in pods}
    assert {k: v.to_list() for k, v in summarised.nodepool_success.items()} == {
        k: v.to_list() for k, v in full.nodepool_success.items()
    }
    assert (summarised.first_time, summarised.last_time) == (full.first_time, full.last_time)
    [finding] = evaluate(summarised)
    assert finding.resolved and finding.resolved_at == log.T0.replace(second=32)
    report = report_to_json(api.analyse(ingested.frame, ingested.stats, now=NOW))
    assert report == json.loads(json.dumps(report))  # (plain JSON values only)


def test_a_batch_shared_with_a_failing_claim_keeps_every_claim_of_that_batch(lines: Any, log: Any) -> None:
    pods = log.pods_of("inflate", 4)
    items = [
        log.found(0, pods),
        log.created(1, "general-purpose-aaaaa"),
        log.created(2, "general-purpose-bbbbb"),
        log.launched(3, "general-purpose-bbbbb"),
        log.quota_failed(4, "general-purpose-aaaaa"),
    ]
    ingested = lines(items)
    walked, _ = split(_relevant(ingested.frame))
    assert {"general-purpose-aaaaa", "general-purpose-bbbbb"} <= set(walked["nodeclaim"].drop_nulls().to_list())
    full, summarised = correlate(ingested.frame), correlate(ingested.frame, summarise=True)
    assert summarised.claims["general-purpose-aaaaa"].pods == full.claims["general-purpose-aaaaa"].pods == []
    assert evaluate(summarised) == evaluate(full)
