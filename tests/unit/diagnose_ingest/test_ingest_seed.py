"""The founding scenario's log, exactly as published (its last line is almost-JSON)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from diagnose.ingest import load
from diagnose.schema import SCHEMA

SEED = Path(__file__).resolve().parents[3] / "fixtures" / "logs" / "seed-karpenter-2023-11-24.log"


@pytest.fixture(scope="module")
def seed() -> pl.DataFrame:
    return load([str(SEED)]).frame


def test_seed_accounting() -> None:
    stats = load([str(SEED)]).stats
    assert (stats.lines, stats.parsed, stats.repaired, stats.unparsed, stats.blank) == (10, 9, 1, 0, 0)
    assert [(e.file, e.line) for e in stats.repaired_refs] == [(str(SEED), 10)]
    assert stats.files == [str(SEED)]


def test_seed_frame_has_the_schema(seed: pl.DataFrame) -> None:
    assert seed.schema == pl.Schema(SCHEMA)
    assert seed["line"].to_list() == list(range(1, 11))
    assert set(seed["shape"]) == {"alpha"}


def test_seed_found_pods(seed: pl.DataFrame) -> None:
    row = seed.row(0, named=True)
    assert row["event"] == "pods.found"
    assert row["pods"] == [
        "default/inflate-74ccd665f4-79x4g",
        "default/inflate-74ccd665f4-mx7q9",
        "default/inflate-74ccd665f4-p8gdr",
        "default/inflate-74ccd665f4-gnvtq",
        "default/inflate-74ccd665f4-4nvsd",
    ]
    assert row["pod_count"] == 10
    assert seed.row(1, named=True)["pod_count"] == 10


def test_seed_created_nodeclaim(seed: pl.DataFrame) -> None:
    row = seed.row(2, named=True)
    assert row["event"] == "nodeclaim.created"
    assert (row["nodepool"], row["nodeclaim"]) == ("general-purpose", "general-purpose-pq7gl")
    assert row["instance_types_count"] == 78
    assert row["requests_cpu_m"] == 10250
    assert row["requests_memory"] == 2981280 * 1024
    assert row["requests_pods"] == 15


def test_seed_launch_events(seed: pl.DataFrame) -> None:
    events = seed["event"].to_list()
    assert events[3:] == [
        "nodeclaim.instance_selected",
        "nodeclaim.image_resolved",
        None,
        "nic.creating",
        "nic.created",
        "vm.creating",
        "nodeclaim.launch_failed",
    ]
    assert seed.row(3, named=True)["instance_type"] == "Standard_D16ls_v5"
    assert seed.row(8, named=True)["instance_type"] == "Standard_D16ls_v5"


def test_seed_repaired_error_line(seed: pl.DataFrame) -> None:
    row = seed.row(9, named=True)
    assert row["parse_status"] == "repaired"
    assert row["level"] == "ERROR"
    assert row["error_code"] == "OperationNotAllowed"
    assert row["category"] == "regional-vcpu-quota"
    assert (row["quota_limit"], row["quota_usage"], row["quota_required"], row["quota_new_limit"]) == (20, 14, 16, 30)
    assert row["quota_scope"] == "regional"
    assert row["region"] == "westus2"
    assert row["nodeclaim"] == "general-purpose-pq7gl"
    assert row["error_message"].startswith("Operation could not be completed as it results in exceeding approved")
    assert row["raw"] == SEED.read_text(encoding="utf-8").splitlines()[9]
    assert row["message"].startswith('Creating virtual machine "aks-general-purpose-pq7gl" failed: PUT https://')


def test_seed_raw_kept_only_where_needed(seed: pl.DataFrame) -> None:
    assert seed["raw"].is_not_null().to_list() == [False] * 9 + [True]
