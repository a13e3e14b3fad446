"""Rendering: the JSON schema holds for every fixture; text reads in seconds; markdown for tickets."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from diagnose.api import diagnose, report_to_json
from diagnose.render import render
from diagnose.render.markdown import render_markdown

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((ROOT / "docs" / "diagnose-report.schema.json").read_text(encoding="utf-8"))
LOGS = [
    ROOT / "fixtures" / "logs" / "seed-karpenter-2023-11-24.log",
    *sorted((ROOT / "fixtures" / "logs" / "rules").glob("*.log")),
    *sorted(p for p in (ROOT / "fixtures" / "logs").glob("*") if p.is_file() and p.name != "seed-karpenter-2023-11-24.log"),
]
CONTRACT = {"category", "severity", "summary", "pods", "pod_count", "nodeclaims", "nodepool", "instance_types", "region",
            "quota", "first_seen", "last_seen", "occurrences", "evidence", "fixes"}


def _check_by_hand(data: dict[str, Any]) -> None:
    """The contract keys and their types, without a schema library."""
    assert {"lines", "parsed", "repaired", "unparsed", "files"} <= set(data["input"])
    assert all(isinstance(data["input"][k], int) for k in ("lines", "parsed", "repaired", "unparsed"))
    for finding in data["findings"]:
        assert set(finding) >= CONTRACT
        assert isinstance(finding["pods"], list) and isinstance(finding["pod_count"], int)
        assert finding["quota"] is None or {"name", "limit", "usage", "required", "new_limit"} <= set(finding["quota"])
        assert all({"file", "line"} <= set(e) for e in finding["evidence"])
        assert all({"kind", "summary", "command"} <= set(f) for f in finding["fixes"])


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.stem)
def test_json_matches_the_documented_schema(path: Path) -> None:
    data = json.loads(json.dumps(report_to_json(diagnose([str(path)]))))
    _check_by_hand(data)
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(data, SCHEMA)


def test_schema_rejects_a_renamed_key() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    data = report_to_json(diagnose([str(LOGS[0])]))
    data["findings"][0]["pod_total"] = data["findings"][0].pop("pod_count")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(json.loads(json.dumps(data)), SCHEMA)


def test_text_is_plain_when_not_a_terminal_and_says_the_essentials() -> None:
    out = io.StringIO()
    render(diagnose([str(LOGS[0])]), "text", out, color=False)
    text = out.getvalue()
    assert "\x1b[" not in text
    assert "10 lines read = 9 parsed + 1 repaired + 0 unparsed" in text
    assert "10 pods of default/inflate are Pending because" in text
    assert "az quota update --resource-name cores" in text
    assert "az vm list-usage -l westus2 -o table" in text
    # commands are never wrapped when the output is a file
    assert any(line.strip().startswith("az quota update") and line.strip().endswith("--resource-type dedicated")
               for line in text.splitlines())


def test_text_has_colour_on_a_terminal() -> None:
    out = io.StringIO()
    render(diagnose([str(LOGS[0])]), "text", out, color=True)
    assert "\x1b[" in out.getvalue()


def test_markdown_for_a_ticket() -> None:
    text = render_markdown(diagnose([str(LOGS[0])]))
    assert text.startswith("# karp-diagnose report")
    assert "## 1. BLOCKING: regional-vcpu-quota" in text
    assert "```sh" in text and "az quota update" in text
    assert "| Quota | `cores`: limit 20, usage 14, headroom 6, required 16, new limit 30" in text
    assert "<details><summary>Cloud error, verbatim</summary>" in text


def test_unparsed_refs_first_few_in_text_all_in_json(tmp_path: Path) -> None:
    path = tmp_path / "noisy.log"
    path.write_text("".join(f"garbage line {i}\n" for i in range(12)), encoding="utf-8")
    report = diagnose([str(path)])
    data = report_to_json(report)
    assert data["input"]["unparsed"] == 12 and len(data["input"]["unparsed_refs"]) == 12
    assert data["input"]["unparsed_refs"][0]["text"] == "garbage line 0"
    out = io.StringIO()
    render(report, "text", out)
    assert "noisy.log:1, :2, :3, :4, :5 and 7 more" in out.getvalue()
    assert "No findings" in out.getvalue()
