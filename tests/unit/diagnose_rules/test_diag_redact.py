"""--redact: ids and addresses masked everywhere, with stable masks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from diagnose.api import diagnose, report_to_json
from diagnose.redact import Redactor

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "logs" / "rules"
SUB = "8f3c2a71-5b9e-4d0c-a6f1-2e7b9c4d1a35"
CLIENT = "c4b1e2d3-6a7f-4e8d-9b0c-1d2e3f4a5b6c"


def test_masks_are_stable_and_typed() -> None:
    redactor = Redactor()
    text = (
        f"/subscriptions/{SUB}/resourceGroups/rg and subscription '{SUB}' tenant 1f2504e0-4f89-11d3-9a0c-0305e82c3301 "
        f"the client '{CLIENT}' node 10.224.0.5 subnet 10.224.0.0/16 at 15:17:48.844 image 202311.13.0 v6 fe80::1"
    )
    out = redactor.text(text)
    assert SUB not in out and CLIENT not in out and "10.224.0.5" not in out and "fe80::1" not in out
    assert out.count("sub-1") == 2
    assert "tenant-1" in out and "client-1" in out
    assert "ip-1" in out and "ip-2/16" in out
    assert "15:17:48.844" in out and "202311.13.0" in out
    assert redactor.text(f"again {SUB} 10.224.0.5") == "again sub-1 ip-1"


def test_masked_publisher_segment_is_masked_too() -> None:
    assert Redactor().text("/subscriptions/xxxxx/resourceGroups/x") == "/subscriptions/sub-1/resourceGroups/x"


def test_whole_report_is_redacted_including_evidence_text_and_commands() -> None:
    report = diagnose([str(FIXTURES / "authorization-failed.log")], redact=True)
    dumped = json.dumps(report_to_json(report))
    assert SUB not in dumped and CLIENT not in dumped
    [finding] = report.findings
    assert "--assignee client-1" in finding.fixes[0].command
    assert "/subscriptions/sub-1/" in finding.fixes[0].command
    assert any("sub-1" in e.text for e in finding.evidence if e.text)
    plain = json.dumps(report_to_json(diagnose([str(FIXTURES / "authorization-failed.log")])))
    assert SUB in plain  # without --redact nothing is masked


def test_unparsed_lines_are_redacted(lines: Any, tmp_path: Path) -> None:
    path = tmp_path / "mixed.log"
    path.write_text(f"plain text from 10.1.2.3 about /subscriptions/{SUB}/x\n", encoding="utf-8")
    report = diagnose([str(path)], redact=True)
    assert report.input.unparsed == 1
    [ref] = report.input.unparsed_refs
    assert ref.text == "plain text from ip-1 about /subscriptions/sub-1/x"
