"""Kubernetes Events (JSON, YAML, events.k8s.io/v1, kubectl describe) in the same table."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from diagnose.events import read_events
from diagnose.ingest import IngestError, load
from diagnose.schema import SCHEMA

ROOT = Path(__file__).resolve().parents[3] / "fixtures"
EVENTS = ROOT / "events"
SEED = ROOT / "logs" / "seed-karpenter-2023-11-24.log"


@pytest.mark.parametrize("name", ["kubectl-get-events-2023-11-24.json", "kubectl-get-events-2023-11-24.yaml"])
def test_event_list_dumps(name: str) -> None:
    frame = read_events(str(EVENTS / name))
    assert frame.schema == pl.Schema(SCHEMA)
    assert frame.height == 7
    assert set(frame["source"]) == {"event"} and set(frame["shape"]) == {"k8s-event"}
    first = frame.row(0, named=True)
    assert (first["event"], first["component"], first["level"]) == ("k8s.FailedScheduling", "default-scheduler", "WARN")
    assert first["pods"] == ["default/inflate-74ccd665f4-79x4g"] and first["object_kind"] == "Pod"
    assert str(first["time"]) == "2023-11-24 15:17:47+00:00"
    nominated = frame.row(1, named=True)
    assert (nominated["event"], nominated["nodeclaim"], nominated["level"]) == (
        "k8s.Nominated", "general-purpose-pq7gl", "INFO",
    )
    launch = frame.row(3, named=True)
    assert (launch["object_kind"], launch["nodeclaim"], launch["error_code"], launch["category"]) == (
        "NodeClaim", "general-purpose-pq7gl", "OperationNotAllowed", "regional-vcpu-quota",
    )
    assert (launch["quota_limit"], launch["quota_usage"], launch["quota_required"], launch["quota_new_limit"]) == (
        20, 14, 16, 30,
    )
    assert frame.row(4, named=True)["category"] == "insufficient-capacity"
    pool = frame.row(5, named=True)
    assert (pool["nodepool"], pool["category"]) == ("gpu", "no-compatible-instance-types")
    assert frame.row(6, named=True)["category"] == "nodepool-limit"
    lines = frame["line"].to_list()
    assert lines == sorted(lines) and len(set(lines)) == 7  # each event points at its own place in the file


def test_events_k8s_io_v1_shape() -> None:
    frame = read_events(str(EVENTS / "events-k8s-io-v1-2026-11-29.json"))
    nominated, blocked = frame.row(0, named=True), frame.row(1, named=True)
    assert (nominated["component"], nominated["nodeclaim"], nominated["node"]) == (
        "karpenter", "general-purpose-r5t6y", "aks-general-purpose-r5t6y",
    )
    assert str(nominated["time"]) == "2026-11-29 18:00:02.114512+00:00"
    assert (blocked["component"], blocked["event"], blocked["nodepool"], blocked["category"]) == (
        "karp-provisioner", "k8s.QuotaBlocked", "general-purpose", "regional-vcpu-quota",
    )


def test_describe_pod() -> None:
    frame = read_events(str(EVENTS / "describe-pod-inflate.txt"))
    assert frame["event"].to_list() == ["k8s.FailedScheduling", "k8s.Nominated", "k8s.FailedScheduling"]
    assert frame["component"].to_list() == ["default-scheduler", "karpenter", "karpenter"]
    assert frame["time"].null_count() == 3  # describe only shows relative ages
    assert set(frame["object_name"]) == {"default/inflate-74ccd665f4-79x4g"}
    assert frame["nodeclaim"][1] == "general-purpose-pq7gl"
    assert frame["category"][2] == "nodepool-limit"
    assert frame["line"].to_list() == [37, 38, 39]
    assert frame["message"][2].endswith('exceed limits for nodepool: "general-purpose"')


def test_describe_nodeclaim() -> None:
    frame = read_events(str(EVENTS / "describe-nodeclaim-general-purpose-pq7gl.txt"))
    assert frame["object_kind"].to_list() == ["NodeClaim", "NodeClaim"]
    assert set(frame["nodeclaim"]) == {"general-purpose-pq7gl"}
    warning = frame.row(1, named=True)
    assert (warning["reason"], warning["category"], warning["quota_new_limit"]) == (
        "InsufficientCapacityError", "regional-vcpu-quota", 30,
    )


def test_load_with_events_counts_them_apart() -> None:
    result = load([str(SEED)], events=[str(EVENTS / "kubectl-get-events-2023-11-24.json")])
    assert result.stats.events == 7 and result.stats.lines == 10
    assert result.frame.height == 17
    assert result.frame["time"].is_sorted(nulls_last=True)
    assert result.stats.files[-1].endswith("kubectl-get-events-2023-11-24.json")


def test_bad_event_dumps_are_named(tmp_path: Path) -> None:
    bad = tmp_path / "events.json"
    bad.write_text('{"items": [')
    with pytest.raises(IngestError, match=re.escape("events.json: not a valid events dump")):
        read_events(str(bad))
    pods = tmp_path / "pods.json"
    pods.write_text('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}')
    with pytest.raises(IngestError, match=re.escape("pods.json: not a valid events dump: no Event objects")):
        load([str(SEED)], events=[str(pods)])
    with pytest.raises(IngestError, match=re.escape("missing.yaml: no such events file")):
        read_events(str(tmp_path / "missing.yaml"))
    yaml_bad = tmp_path / "bad.yaml"
    yaml_bad.write_text("items: [\n  - {a: 1\n")
    with pytest.raises(IngestError, match=re.escape("bad.yaml: not a valid events dump")):
        read_events(str(yaml_bad))
