"""Every log shape maps onto the same columns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from diagnose.ingest import load, parse_lines

LOGS = Path(__file__).resolve().parents[3] / "fixtures" / "logs"


def rows(name: str) -> list[dict[str, Any]]:
    return load([str(LOGS / name)]).frame.sort("line").to_dicts()


def by_line(name: str) -> dict[int, dict[str, Any]]:
    return {r["line"]: r for r in rows(name)}


def test_v1_azure_log() -> None:
    r = by_line("karpenter-v1-azure-2024-08-04.log")
    assert r[1]["shape"] == "v1" and r[1]["component"] == "provisioner"
    assert r[1]["pod_count"] == 8 and len(r[1]["pods"]) == 5
    assert r[3]["nodepool"] == "batch" and r[3]["nodeclaim"] == "batch-x7k2p"
    assert r[3]["instance_types_count"] == 17 and r[3]["requests_memory"] == 131553 * 2**20
    family = r[4]
    assert family["event"] == "nodeclaim.launch_failed"
    assert family["category"] == "family-vcpu-quota" and family["quota_name"] == "standardDASv5Family"
    assert (family["quota_limit"], family["quota_usage"], family["quota_required"], family["quota_new_limit"]) == (
        100, 96, 64, 160,
    )
    assert family["region"] == "eastus" and family["raw"] is not None
    assert r[6]["category"] == "spot-vcpu-quota" and r[6]["quota_name"] == "lowPriorityCores"
    assert (r[7]["error_code"], r[7]["category"]) == ("ZonalAllocationFailed", "zonal-allocation-failed")
    assert (r[8]["error_code"], r[8]["category"]) == ("SkuNotAvailable", "sku-not-available")
    assert r[9]["category"] == "insufficient-capacity" and r[9]["error_code"] is None
    assert r[10]["event"] == "pod.unschedulable" and r[10]["pods"] == ["batch/train-5f9c7d-zz91x"]
    assert r[10]["category"] == "no-compatible-instance-types"
    assert r[11]["category"] == "nodepool-limit"
    launched = r[12]
    assert (launched["event"], launched["instance_type"], launched["zone"], launched["capacity_type"]) == (
        "nodeclaim.launched", "Standard_D4as_v5", "eastus-2", "on-demand",
    )
    assert r[13]["node"] == "aks-general-purpose-t5v7b"
    assert (r[15]["event"], r[15]["category"]) == ("nodeclaim.registration_timeout", "registration-timeout")
    assert [r[k]["event"] for k in (16, 17, 18)] == ["disruption.started", "node.deleted", "nodeclaim.deleted"]


def test_knative_fallback_lines() -> None:
    r = by_line("karpenter-v07-fallback-2024-11-08.log")
    assert r[3]["shape"] == "fallback" and r[3]["level"] == "INFO"
    assert r[3]["event"] == "nodeclaim.instance_selected" and r[3]["instance_type"] == "Standard_D8_v3"
    assert r[3]["time"].timestamp() == 1731024135.06
    assert r[5]["event"] == "vm.creating" and r[5]["level"] == "DEBUG"
    assert (r[6]["event"], r[6]["error_code"], r[6]["category"]) == (
        "nodeclaim.launch_failed", "AllocationFailed", "allocation-failed",
    )
    assert r[7]["capacity_type"] == "spot"


def test_zap_console_lines() -> None:
    r = by_line("karpenter-zap-console-2023-10-27.log")
    assert {x["shape"] for x in r.values()} == {"zap-console"}
    assert r[1]["pods"] == ["default/inflate-5d5bcf9c6f-b2kxd", "default/inflate-5d5bcf9c6f-kq7fr"]
    assert r[1]["pod_count"] == 3 and r[1]["level"] == "DEBUG" and r[1]["component"] == "provisioner"
    assert r[3]["instance_types_count"] == 48 and r[3]["requests_cpu_m"] == 3250
    assert r[4]["instance_type"] == "Standard_D4s_v3"
    assert (r[5]["error_code"], r[5]["category"], r[5]["region"]) == ("SkuNotAvailable", "sku-not-available", "westus2")
    assert r[5]["message"] == "Creating virtual machine failed"  # the caller column is not the message


def test_aws_provider_lines() -> None:
    r = by_line("karpenter-aws-v1-2024-09-12.log")
    assert (r[3]["error_code"], r[3]["category"]) == ("InsufficientInstanceCapacity", "insufficient-capacity")
    assert r[3]["error_message"].startswith("We currently do not have sufficient g5.12xlarge capacity")
    assert (r[4]["error_code"], r[4]["category"]) == ("VcpuLimitExceeded", "regional-vcpu-quota")
    assert r[5]["zone"] == "us-west-2a"


def test_own_records_taken_as_written() -> None:
    r = by_line("karp-provisioner-2026-11-29.log")
    assert {x["shape"] for x in r.values()} == {"karp"}
    blocked = r[2]
    assert blocked["event"] == "quota.blocked" and blocked["nodepool"] == "general-purpose"
    assert (blocked["error_code"], blocked["category"], blocked["quota_scope"], blocked["quota_name"]) == (
        "OperationNotAllowed", "regional-vcpu-quota", "regional", "cores",
    )
    assert (blocked["quota_limit"], blocked["quota_usage"], blocked["quota_required"], blocked["quota_new_limit"]) == (
        20, 14, 16, 30,
    )
    assert blocked["region"] == "westus2" and blocked["pod_count"] == 10
    assert r[3]["error_message"].startswith("Operation could not be completed")
    assert r[3]["nodeclaim"] == "general-purpose-pq7gl"


def test_kubectl_prefixes() -> None:
    plain = by_line("karpenter-v1-azure-2024-08-04.log")
    both = by_line("kubectl-prefix-timestamps-2024-08-04.log")
    for line in (1, 2, 3, 4):
        for column in ("event", "pods", "pod_count", "nodeclaim", "category", "quota_limit", "time", "error_message"):
            assert both[line][column] == plain[line][column], (line, column)
    assert both[5]["parse_status"] == "unparsed" and both[5]["raw"].startswith("[pod/karpenter-")
    stamped = by_line("kubectl-timestamps-2024-08-04.log")
    assert stamped[3]["requests_cpu_m"] == 32250


def test_kubectl_timestamp_used_when_the_record_has_none() -> None:
    frame = parse_lines(['2024-08-04T21:21:43.196123456Z {"level":"INFO","message":"launched nodeclaim"}']).frame
    assert str(frame["time"][0]) == "2024-08-04 21:21:43.196123+00:00"


def test_pretty_printed_records() -> None:
    result = load([str(LOGS / "karpenter-pretty-printed.json")])
    stats = result.stats
    assert stats.lines == stats.parsed and stats.unparsed == 0
    assert result.frame["line"].to_list() == [1, 11]
    second = result.frame.row(1, named=True)
    assert second["category"] == "family-vcpu-quota" and second["quota_new_limit"] == 160
    assert second["raw"].startswith("{\n")


def test_offsets_in_time_and_lowercase_levels() -> None:
    frame = parse_lines(
        [
            '{"level":"warning","time":"2024-08-04T23:21:43.196+02:00","message":"x"}',
            '{"level":"info","time":"2024-08-04T21:21:43Z","message":"y"}',
        ]
    ).frame.sort("line")
    assert frame["level"].to_list() == ["WARN", "INFO"]
    assert [str(t) for t in frame["time"]] == ["2024-08-04 21:21:43.196000+00:00", "2024-08-04 21:21:43+00:00"]


def test_pods_as_array_and_single_pod() -> None:
    frame = parse_lines(
        [
            '{"level":"INFO","message":"found provisionable pod(s)","Pods":["ns/a","ns/b"]}',
            '{"level":"INFO","message":"x","pod":"ns/c"}',
        ]
    ).frame.sort("line")
    assert frame["pods"].to_list() == [["ns/a", "ns/b"], ["ns/c"]]
    assert frame["pod_count"].to_list() == [2, 1]


def test_sorted_by_time_then_line() -> None:
    frame = parse_lines(
        [
            '{"level":"INFO","time":"2024-01-01T00:00:02Z","message":"b"}',
            "not json",
            '{"level":"INFO","time":"2024-01-01T00:00:01Z","message":"a"}',
        ]
    ).frame
    assert frame["line"].to_list() == [3, 1, 2]
    assert frame.schema == pl.Schema(dict(frame.schema))


def test_other_time_spellings() -> None:
    frame = parse_lines(
        [
            '{"level":"INFO","time":"2024-08-04T23:21:43.196+0200","message":"a"}',
            '{"level":"INFO","time":"2024-08-04 21:21:43.196Z","message":"b"}',
            '{"level":"INFO","time":1722806503.196,"message":"c"}',
            '{"level":"INFO","time":"2024-08-04T21:21:43.196000001z","message":"e"}',
            '{"level":"INFO","time":"2024-08-04T21:21:43.196","message":"f (no zone: UTC)"}',
            '{"level":"INFO","time":"not a time","message":"d"}',
        ]
    ).frame.sort("line")
    times = [str(t) if t is not None else None for t in frame["time"]]
    assert times == ["2024-08-04 21:21:43.196000+00:00"] * 5 + [None]
