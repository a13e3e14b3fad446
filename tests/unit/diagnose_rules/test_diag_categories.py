"""Every category of the fixed vocabulary comes out of a realistic log of its shape, once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diagnose.api import diagnose
from diagnose.findings import BLOCKING, CATEGORIES, WARNING

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "logs" / "rules"
WARNINGS = {"nic-reserved", "throttled", "unknown-error"}
OTHERS = [c for c in CATEGORIES if c != "regional-vcpu-quota"]  # the founding log covers that one


def test_every_category_has_a_fixture() -> None:
    assert {p.stem for p in FIXTURES.glob("*.log")} == set(OTHERS)


@pytest.mark.parametrize("category", OTHERS)
def test_fixture_gives_its_category_with_numbers_and_a_fix(category: str) -> None:
    report = diagnose([str(FIXTURES / f"{category}.log")])
    assert [f.category for f in report.findings] == [category]
    finding = report.findings[0]
    assert finding.severity == (WARNING if category in WARNINGS else BLOCKING)
    assert finding.summary and finding.fixes and all(f.summary for f in finding.fixes)
    assert finding.evidence and all(e.line > 0 for e in finding.evidence)
    assert finding.first_seen is not None and finding.occurrences >= 1
    if category != "unknown-error":
        assert finding.pod_count > 0 and finding.pods


def test_family_quota_numbers_and_request(log: Any) -> None:
    [finding] = diagnose([str(FIXTURES / "family-vcpu-quota.log")]).findings
    assert finding.quota is not None
    assert (finding.quota.name, finding.quota.scope, finding.quota.limit, finding.quota.usage) == (
        "standardDASv5Family", "family", 100, 96)
    assert finding.quota.new_limit == 104 and finding.region == "eastus"
    assert "--resource-name standardDASv5Family" in finding.fixes[0].command
    assert "--resource-type dedicated" in finding.fixes[0].command
    # the subscription id is in the log, so the command carries it
    assert "/subscriptions/8f3c2a71-5b9e-4d0c-a6f1-2e7b9c4d1a35/providers/Microsoft.Compute/locations/eastus" in (
        finding.fixes[0].command)


def test_spot_quota_asks_for_low_priority_and_falls_back_to_on_demand() -> None:
    [finding] = diagnose([str(FIXTURES / "spot-vcpu-quota.log")]).findings
    assert finding.quota is not None and finding.quota.name == "lowPriorityCores"
    assert "--resource-type lowPriority" in finding.fixes[0].command
    assert "on-demand" in finding.fixes[1].command


def test_unknown_error_is_quoted_verbatim() -> None:
    [finding] = diagnose([str(FIXTURES / "unknown-error.log")]).findings
    assert "the object has been modified" in finding.error_message
    assert "the object has been modified" in finding.summary


def test_nodepool_is_read_from_karpenter_error_text() -> None:
    [finding] = diagnose([str(FIXTURES / "nodepool-limit.log")]).findings
    assert finding.nodepool == "batch"
    [finding] = diagnose([str(FIXTURES / "no-compatible-instance-types.log")]).findings
    assert finding.nodepool == "general-purpose"


def test_authorization_fix_names_the_client_and_scope() -> None:
    [finding] = diagnose([str(FIXTURES / "authorization-failed.log")]).findings
    command = finding.fixes[0].command
    assert "--assignee c4b1e2d3-6a7f-4e8d-9b0c-1d2e3f4a5b6c" in command
    assert "Virtual Machine Contributor" in command


def test_subnet_full_names_the_subnet() -> None:
    [finding] = diagnose([str(FIXTURES / "subnet-full.log")]).findings
    assert "subnets/nodes" in finding.summary and "10.224.0.0/24" in finding.summary


def test_event_only_categories_from_a_frame(frame_of: Any) -> None:
    from datetime import UTC, datetime

    from diagnose.api import analyse
    from diagnose.findings import InputStats

    t = datetime(2024, 1, 1, tzinfo=UTC)
    frame = frame_of([
        {"time": t, "source": "event", "event": "k8s.NoCompatibleInstanceTypes", "level": "WARN", "reason":
         "NoCompatibleInstanceTypes", "object_kind": "NodePool", "object_name": "gpu", "nodepool": "gpu",
         "message": "NodePool requirements filtered out all compatible available instance types"},
        {"time": t, "event": "nodepool.limit_reached", "nodepool": "batch", "level": "WARN",
         "message": "nodepool limit reached"},
        {"time": t, "event": "nodeclaim.registration_timeout", "nodeclaim": "batch-abcde", "nodepool": "batch",
         "level": "ERROR", "message": "registration timed out"},
        {"time": t, "source": "event", "event": "k8s.FailedScheduling", "level": "WARN", "component": "default-scheduler",
         "object_kind": "Pod", "object_name": "default/x", "message": "0/3 nodes are available: 3 Insufficient cpu."},
    ])
    report = analyse(frame, InputStats(lines=4, parsed=4, repaired=0, unparsed=0, files=["frame.log"]))
    assert sorted(f.category for f in report.findings) == [
        "no-compatible-instance-types", "nodepool-limit", "registration-timeout"]
