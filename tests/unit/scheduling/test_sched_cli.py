"""``karp-provisioner plan``: files in, plan out, clear errors."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from provisioner.commands.plan import main

ROOT = Path(__file__).resolve().parents[3]
M = ROOT / "fixtures" / "manifests"
FOUNDING = ["--pods", str(M / "inflate.yaml"), "--pods", str(M / "daemonsets.yaml"),
            "--nodepool", str(M / "nodepool.yaml"), "--nodepool", str(M / "aksnodeclass.yaml")]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_founding_scenario_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *FOUNDING, "--quota", "cores=20", "--usage", "cores=14")
    assert code == 0
    assert "Standard_D4ls_v5" in out and "Standard_D2ls_v5" in out
    assert "[quota-regional]" in out and "a limit of at least 28" in out
    assert "4 of 10 pods placed" in out and "$0.2550/hour" in out and "planned in" in out


def test_founding_scenario_quota_blind_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *FOUNDING, "--quota", "cores=20", "--usage", "cores=14", "--quota-blind", "--json")
    assert code == 0
    data = json.loads(out)
    assert {"nodeclaims", "unplaced", "cost_per_hour", "elapsed_ms"} <= data.keys()
    (claim,) = data["nodeclaims"]
    assert {"instance_type", "capacity_type", "zone", "pods", "price_per_hour"} <= claim.keys()
    assert claim["instance_type"] == "Standard_D16ls_v5" and len(claim["pods"]) == 10
    assert claim["requests"] == {"cpu": "10250m", "memory": "2981280Ki", "pods": "15"}
    assert data["unplaced"] == [] and data["cost_per_hour"] == 0.68 and data["elapsed_ms"] >= 0


def test_quota_aware_json_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, *FOUNDING, "--quota", "cores=20", "--usage", "cores=14", "--json")
    data = json.loads(out)
    assert sum(c["vcpus"] for c in data["nodeclaims"]) <= 6
    assert len(data["unplaced"]) == 6
    first = data["unplaced"][0]
    assert first["pod"].startswith("default/inflate-") and "cores" in first["reason"]
    assert first["code"] == "quota-regional" and first["detail"]["new_limit"] == 28


def test_overhead_flag_stdin_and_default_nodepool(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO((M / "inflate.yaml").read_text()))
    code, out, _ = run(capsys, "--pods", "-", "--daemonset-overhead", "cpu=250m,memory=481280Ki,pods=5", "--json")
    assert code == 0
    data = json.loads(out)
    assert sum(len(c["pods"]) for c in data["nodeclaims"]) == 10
    assert {c["nodepool"] for c in data["nodeclaims"]} == {"default"}
    assert all(c["requests"]["pods"] == str(len(c["pods"]) + 5) for c in data["nodeclaims"])


def test_json_pod_list_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "pods.json"
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "x"},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}]}}
    f.write_text(json.dumps({"kind": "List", "items": [pod]}))
    code, out, _ = run(capsys, "--pods", str(f), "--location", "eastus", "--json")
    assert code == 0 and json.loads(out)["nodeclaims"][0]["pods"] == ["x/p"]


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("kind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n"
         "      - name: c\n        resources: {requests: {memory: lots}}\n", "document 1 (Deployment default/web)"),
        ("a: [unclosed\n", "not valid YAML"),
        ("---\nkind: Pod\nmetadata: {name: ok}\nspec: {containers: [{name: c}]}\n---\n- just\n- a list\n",
         "document 2: expected a Kubernetes object"),
        ('{"kind": "Pod", ', "not valid JSON"),
    ],
)
def test_bad_files_exit_2_naming_file_and_document(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                   content: str, needle: str) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(content)
    code, out, err = run(capsys, "--pods", str(f))
    assert code == 2 and out == ""
    assert str(f) in err and needle in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--usage", "cores=3"], "--usage cores: no --quota"),
        (["--quota", "cores=twenty"], "--quota/--usage cores"),
        (["--quota", "cores"], "expected NAME=VALUE"),
        (["--daemonset-overhead", "cpu=fast"], "--daemonset-overhead"),
        (["--location", "atlantis"], "region 'atlantis'"),
    ],
)
def test_bad_flags_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    code, _, err = run(capsys, "--pods", str(M / "inflate.yaml"), *argv)
    assert code == 2 and needle in err


def test_missing_file_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--pods", "/nonexistent/pods.yaml")
    assert code == 2 and "/nonexistent/pods.yaml: cannot read it" in err
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    assert "examples:" in capsys.readouterr().out
