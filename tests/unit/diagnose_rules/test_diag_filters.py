"""Filters: time window, pods, NodePools, NodeClaims and categories."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from diagnose.api import analyse
from diagnose.filters import Filters, parse_categories, parse_time
from provisioner.model.errors import InputError

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def test_parse_time_iso_and_relative() -> None:
    assert parse_time("2h", NOW) == NOW - timedelta(hours=2)
    assert parse_time("1h30m", NOW) == NOW - timedelta(minutes=90)
    assert parse_time("90s", NOW) == NOW - timedelta(seconds=90)
    assert parse_time("2023-11-24T15:17:54Z", NOW) == datetime(2023, 11, 24, 15, 17, 54, tzinfo=UTC)
    assert parse_time("2023-11-24T15:17:54", NOW).tzinfo is not None
    with pytest.raises(InputError, match="--since 'yesterday'"):
        parse_time("yesterday", NOW)


def test_categories_are_validated() -> None:
    assert parse_categories(["throttled,subnet-full", "throttled"]) == ("throttled", "subnet-full")
    with pytest.raises(InputError, match="--category 'quota': unknown category"):
        parse_categories(["quota"])
    with pytest.raises(InputError, match="after --until"):
        Filters(since=NOW, until=NOW - timedelta(hours=1))


def _two_causes(lines: Any, log: Any) -> Any:
    return lines([
        log.found(0, log.pods_of("api", 3, "shop")),
        log.created(1, "general-purpose-aaaaa"),
        log.quota_failed(2, "general-purpose-aaaaa", required=16),
        log.found(3600, log.pods_of("worker", 2, "jobs")),
        log.created(3601, "batch-bbbbb", pool="batch"),
        log.failed(3602, "batch-bbbbb", "AllocationFailed",
                   "Allocation failed. We do not have sufficient capacity for the requested VM size in this region.",
                   pool="batch", status="200: 200 OK"),
    ])


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (Filters(), ["regional-vcpu-quota", "allocation-failed"]),
        (Filters(categories=("allocation-failed",)), ["allocation-failed"]),
        (Filters(nodepools=("general-*",)), ["regional-vcpu-quota"]),
        (Filters(nodeclaims=("batch-bbbbb",)), ["allocation-failed"]),
        (Filters(pods=("jobs/worker-*",)), ["allocation-failed"]),
        (Filters(pods=("api",)), ["regional-vcpu-quota"]),
        (Filters(pods=("api-7c9d5f8b6d-2xkqp",)), ["regional-vcpu-quota"]),
        (Filters(pods=("nobody",)), []),
    ],
)
def test_object_filters_keep_matching_findings(lines: Any, log: Any, filters: Filters, expected: list[str]) -> None:
    ingested = _two_causes(lines, log)
    report = analyse(ingested.frame, ingested.stats, filters=filters)
    assert [f.category for f in report.findings] == expected
    assert report.hidden == 2 - len(expected)


def test_time_window_cuts_the_input(lines: Any, log: Any) -> None:
    ingested = _two_causes(lines, log)
    late = Filters(since=log.T0 + timedelta(minutes=30))
    assert [f.category for f in analyse(ingested.frame, ingested.stats, filters=late).findings] == ["allocation-failed"]
    early = Filters(until=log.T0 + timedelta(minutes=30))
    report = analyse(ingested.frame, ingested.stats, filters=early)
    assert [f.category for f in report.findings] == ["regional-vcpu-quota"]
    assert report.filters["until"] == [(log.T0 + timedelta(minutes=30)).isoformat()]
