"""karp-diagnose as a user runs it: a subprocess, real files, stdin, exit codes and messages."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "fixtures" / "logs" / "seed-karpenter-2023-11-24.log"
RULES = ROOT / "fixtures" / "logs" / "rules"


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.run(
        [sys.executable, "-c", "import sys; from diagnose.cli import main; sys.exit(main(sys.argv[1:]))", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )


def test_seed_log_text_and_exit_code_one() -> None:
    result = run(str(SEED))
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert "\x1b[" not in out
    assert "10 lines read = 9 parsed + 1 repaired + 0 unparsed" in out
    assert "1 finding: 1 blocking" in out
    assert "10 pods of default/inflate are Pending because NodeClaim general-purpose-pq7gl" in out
    assert "Standard_D16ls_v5 (16 vCPUs)" in out and "westus2" in out
    assert "limit 20, usage 14" in out and "required 16" in out and "at least 30" in out
    assert (
        "az quota update --resource-name cores --scope /subscriptions/<subscription-id>/providers/Microsoft.Compute/"
        "locations/westus2 --limit-object value=30 --resource-type dedicated"
    ) in out
    assert "kubectl patch nodepool general-purpose" in out
    assert result.stderr == ""


def test_seed_log_json() -> None:
    result = run(str(SEED), "--format", "json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["input"]["lines"] == 10 and data["input"]["files"] == [str(SEED)]
    [finding] = data["findings"]
    assert finding["category"] == "regional-vcpu-quota" and finding["severity"] == "blocking"
    assert finding["nodeclaims"] == ["general-purpose-pq7gl"] and finding["nodepool"] == "general-purpose"
    assert finding["pod_count"] == 10 and finding["instance_types"] == ["Standard_D16ls_v5"]
    assert finding["instance_type_vcpus"] == {"Standard_D16ls_v5": 16}
    assert {k: finding["quota"][k] for k in ("name", "limit", "usage", "required", "new_limit")} == {
        "name": "cores", "limit": 20, "usage": 14, "required": 16, "new_limit": 30}
    assert finding["first_seen"] == finding["last_seen"] == "2023-11-24T15:17:54.619000Z"
    assert [f["kind"] for f in finding["fixes"]] == ["quota-request", "nodepool-change"]


def test_markdown_output() -> None:
    result = run(str(SEED), "--format", "markdown")
    assert result.returncode == 1
    assert result.stdout.startswith("# karp-diagnose report")


def test_stdin_dash() -> None:
    result = run("-", "--format", "json", stdin=SEED.read_bytes())
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["findings"][0]["category"] == "regional-vcpu-quota"
    assert data["input"]["files"] == ["-"]


def test_directory_and_gzip_inputs(tmp_path: Path) -> None:
    (tmp_path / "a.log.gz").write_bytes(gzip.compress((RULES / "throttled.log").read_bytes()))
    (tmp_path / "b.log").write_bytes((RULES / "subnet-full.log").read_bytes())
    result = run(str(tmp_path), "--format", "json")
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert sorted(f["category"] for f in data["findings"]) == ["subnet-full", "throttled"]
    assert data["findings"][0]["category"] == "subnet-full"  # blocking before warning


def test_only_warnings_exit_zero() -> None:
    result = run(str(RULES / "throttled.log"))
    assert result.returncode == 0
    assert "WARNING throttled" in result.stdout


def test_category_filter_changes_exit_code() -> None:
    result = run(str(SEED), "--category", "throttled,subnet-full", "--format", "json")
    assert result.returncode == 0
    data = json.loads(result.stdout)
    assert data["findings"] == [] and data["counts"]["hidden"] == 1
    assert data["filters"]["category"] == ["throttled", "subnet-full"]


def test_filters_pod_nodepool_nodeclaim_and_time() -> None:
    assert run(str(SEED), "--pod", "default/inflate-*").returncode == 1
    assert run(str(SEED), "--pod", "inflate").returncode == 1
    assert run(str(SEED), "--pod", "default/other").returncode == 0
    assert run(str(SEED), "--nodepool", "general-purpose").returncode == 1
    assert run(str(SEED), "--nodeclaim", "nope-*").returncode == 0
    assert run(str(SEED), "--since", "2023-11-24T15:17:50Z").returncode == 1
    assert run(str(SEED), "--since", "2023-11-24T15:18:00Z").returncode == 0
    assert run(str(SEED), "--until", "2023-11-24T15:00:00Z").returncode == 0
    assert run(str(SEED), "--since", "2h").returncode == 0  # 2023 is long before now


def test_redact_masks_ids_and_addresses_everywhere() -> None:
    sub = "8f3c2a71-5b9e-4d0c-a6f1-2e7b9c4d1a35"
    plain = run(str(RULES / "subnet-full.log"), "--format", "json")
    assert sub in plain.stdout and "10.224.0.0" in plain.stdout
    result = run(str(RULES / "subnet-full.log"), "--format", "json", "--redact")
    assert result.returncode == 1
    assert sub not in result.stdout and "10.224.0.0" not in result.stdout
    assert "sub-1" in result.stdout and "ip-1/24" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent/karpenter.log"], "/nonexistent/karpenter.log"),
        ([str(SEED), "--category", "quota"], "--category 'quota'"),
        ([str(SEED), "--since", "last tuesday"], "--since 'last tuesday'"),
        ([str(SEED), "--format", "yaml"], "--format"),
        ([], "no input"),
        ([str(SEED), "--azure"], "--azure"),
        ([str(SEED), "--azure", "--subscription", "abc", "--azure-endpoint", "ftp:/x"], "--azure-endpoint"),
        ([str(SEED), "--live", "--kubeconfig", "/nonexistent/kubeconfig"], "/nonexistent/kubeconfig"),
        ([str(SEED), "--quota-snapshot", "/nonexistent/usage.json"], "/nonexistent/usage.json"),
    ],
)
def test_bad_usage_or_input_exits_two_with_one_line(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert result.stdout == ""


def test_help_teaches_with_examples() -> None:
    result = run("--help")
    assert result.returncode == 0
    assert "examples:" in result.stdout and "--format json" in result.stdout and "exit codes" in result.stdout


def test_quota_snapshot_is_shown(tmp_path: Path) -> None:
    snapshot = tmp_path / "usage.json"
    snapshot.write_text(json.dumps([{"currentValue": 14, "limit": 40, "name": {"value": "cores"}}]), encoding="utf-8")
    result = run(str(SEED), "--quota-snapshot", str(snapshot), "--format", "json")
    data = json.loads(result.stdout)
    assert data["quota_source"] == "snapshot"
    assert data["findings"][0]["quota"]["live"]["limit"] == 40


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).with_name("karp-diagnose")
    if not script.exists():
        pytest.skip("console script not installed in this environment")
    result = subprocess.run([str(script), str(SEED)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "regional-vcpu-quota" in result.stdout


def test_log_and_events_together() -> None:
    events = ROOT / "fixtures" / "events" / "kubectl-get-events-2023-11-24.json"
    if not events.exists():
        pytest.skip("events fixture not present")
    result = run(str(SEED), "--events", str(events), "--format", "json")
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["input"]["events"] > 0 and str(events) in data["input"]["files"]
    categories = [f["category"] for f in data["findings"]]
    assert categories[0] == "regional-vcpu-quota" and categories.count("regional-vcpu-quota") == 1
    quota = data["findings"][0]
    assert quota["pod_count"] == 10 and quota["occurrences"] == 1
    assert any(e["file"] == str(events) for e in quota["evidence"])  # the LaunchFailed event joins the finding


def test_colour_only_when_asked_or_on_a_terminal() -> None:
    assert "\x1b[" in run(str(SEED), "--color", "always").stdout
    assert "\x1b[" not in run(str(SEED), "--color", "auto").stdout  # stdout is a pipe here
