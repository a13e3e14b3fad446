"""The emulator on the wire: Azure-shaped errors for bad requests, the request log, faults files, the CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from sim.arm import ArmEmulator, load_faults

AUTH = {"Authorization": "Bearer secret-token-value"}


@pytest.fixture(scope="module")
def arm() -> Iterator[ArmEmulator]:
    with ArmEmulator(quotas={"cores": 20}, usages={"cores": 14}) as emulator:
        yield emulator


def _url(arm: ArmEmulator, tail: str, api: str = "2026-04-01") -> str:
    info = arm.endpoint
    sep = "&" if "?" in tail else "?"
    return f"{info.endpoint}/subscriptions/{info.subscription}{tail}{sep}api-version={api}"


def _vm_url(arm: ArmEmulator, name: str) -> str:
    return _url(arm, f"/resourceGroups/{arm.endpoint.resource_group}/providers/Microsoft.Compute/virtualMachines/{name}")


def _call(arm: ArmEmulator, method: str, url: str, **kwargs: Any) -> requests.Response:
    headers = kwargs.pop("headers", AUTH)
    return requests.request(method, url, headers=headers, verify=arm.endpoint.ca_cert, timeout=5, **kwargs)


def test_usages_and_skus_shapes(arm: ArmEmulator) -> None:
    arm.reset()
    usages = _call(arm, "GET", _url(arm, "/providers/Microsoft.Compute/locations/westus2/usages")).json()["value"]
    names = [u["name"]["value"] for u in usages]
    assert names[0] == "cores" and names[-1] == "lowPriorityCores" and "standardDLSv5Family" in names
    assert usages[0] == {"unit": "Count", "currentValue": 14, "limit": 20,
                         "name": {"value": "cores", "localizedValue": "Total Regional vCPUs"}}
    skus = _call(arm, "GET", _url(arm, "/providers/Microsoft.Compute/skus?$filter=location eq 'westus2'")).json()
    d16 = next(s for s in skus["value"] if s["name"] == "Standard_D16ls_v5")
    assert d16["family"] == "standardDLSv5Family" and "prices" not in d16
    assert {"name": "vCPUs", "value": "16"} in d16["capabilities"]
    elsewhere = _call(arm, "GET", _url(arm, "/providers/Microsoft.Compute/skus?$filter=location eq 'eastus'")).json()
    assert elsewhere == {"value": []}


@pytest.mark.parametrize(
    ("method", "tail", "body", "status", "code"),
    [
        ("GET", "/providers/Microsoft.Compute/nothingHere", None, 404, "NotFound"),
        ("PUT", "VM", b"{not json", 400, "InvalidRequestContent"),
        ("PUT", "VM", b"", 400, "InvalidRequestContent"),
        ("PUT", "VM", json.dumps({"location": "westus2"}).encode(), 400, "InvalidParameter"),
        ("PUT", "VM", json.dumps({"location": "westus2", "properties": {}}).encode(), 400, "InvalidParameter"),
        ("PUT", "VM", json.dumps({"location": "eastus", "properties": {"hardwareProfile": {"vmSize": "Standard_D2s_v5"}}}).encode(),
         400, "LocationNotAvailableForResourceType"),
        ("PUT", "VM", json.dumps({"location": "westus2", "properties": {
            "hardwareProfile": {"vmSize": "Standard_Nope"},
            "networkProfile": {"networkInterfaces": [{"id": "/x"}]}}}).encode(), 400, "InvalidParameter"),
        ("PUT", "VM", json.dumps({"location": "westus2", "properties": {
            "hardwareProfile": {"vmSize": "Standard_D2s_v5"},
            "networkProfile": {"networkInterfaces": [{"id": "/no/such/nic"}]}}}).encode(), 400, "InvalidResourceReference"),
        ("GET", "VM", None, 404, "ResourceNotFound"),
        ("POST", "VM", b"{}", 405, "MethodNotAllowed"),
    ],
)
def test_bad_requests_get_azure_shaped_errors(arm: ArmEmulator, method: str, tail: str, body: bytes | None,
                                              status: int, code: str) -> None:
    url = _vm_url(arm, "aks-bad") if tail == "VM" else _url(arm, tail)
    response = _call(arm, method, url, data=body)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    assert "Retry-After" not in response.headers


def test_missing_auth_api_version_and_wrong_scope(arm: ArmEmulator) -> None:
    url = _url(arm, "/providers/Microsoft.Compute/locations/westus2/usages")
    assert _call(arm, "GET", url, headers={}).json()["error"]["code"] == "AuthenticationFailed"
    no_version = url.split("?")[0]
    assert _call(arm, "GET", no_version).json()["error"]["code"] == "MissingApiVersionParameter"
    other_sub = url.replace(arm.endpoint.subscription, "00000000-0000-0000-0000-000000000000")
    assert _call(arm, "GET", other_sub).json()["error"]["code"] == "SubscriptionNotFound"
    other_rg = _vm_url(arm, "x").replace(arm.endpoint.resource_group, "rg-other")
    assert _call(arm, "GET", other_rg).json()["error"]["code"] == "ResourceGroupNotFound"


def test_request_log_records_calls_but_never_tokens(arm: ArmEmulator) -> None:
    arm.reset()
    _call(arm, "GET", _url(arm, "/providers/Microsoft.Compute/locations/westus2/usages"))
    _call(arm, "GET", _url(arm, "/providers/Microsoft.Compute/locations/westus2/usages"), headers={})
    log = arm.request_log
    assert [(r.op, r.status, r.authenticated, r.api_version) for r in log] == [
        ("get_usages", 200, True, "2026-04-01"),
        ("get_usages", 401, False, "2026-04-01"),
    ]
    assert "secret-token-value" not in repr(log)


def test_faults_file_json_and_yaml(tmp_path: Path) -> None:
    yaml_file = tmp_path / "faults.yaml"
    yaml_file.write_text(
        "seed: 7\nrules:\n"
        "  - {op: create_vm, sku: Standard_D16ls_v5, kind: sku_not_available}\n"
        "  - {op: '*', kind: throttle, rate: 0.5, retry_after: 2}\n"
    )
    plan = load_faults(yaml_file)
    assert [r.kind for r in plan.rules] == ["sku_not_available", "throttle"]
    assert plan.rules[1].retry_after == 2 and plan.rules[1].rate == 0.5
    fires = [plan.draw("get_usages") is not None for _ in range(200)]
    assert 60 < sum(fires) < 140  # about half, from the seeded generator
    again = load_faults(yaml_file)
    assert [again.draw("get_usages") is not None for _ in range(200)] == fires  # same seed, same draws
    json_file = tmp_path / "faults.json"
    json_file.write_text(json.dumps([{"op": "get_usages", "kind": "server_error", "status": 503, "count": 1}]))
    plan = load_faults(json_file)
    assert plan.draw("get_usages") is not None and plan.draw("get_usages") is None
    bad = tmp_path / "bad.yaml"
    bad.write_text("- {op: create_vm, kind: explode}\n")
    with pytest.raises(ValueError, match="kind 'explode' is not one of"):
        load_faults(bad)


def _run_cli(*args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "sim.cli", "arm", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def test_cli_prints_the_ready_line_and_serves(tmp_path: Path) -> None:
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps([{"op": "get_usages", "kind": "server_error", "count": 1}]))
    process = _run_cli("--quota", "cores=20", "--usage", "cores=14", "--faults", str(faults))
    try:
        assert process.stdout is not None
        info = json.loads(process.stdout.readline())
        assert set(info) == {"endpoint", "ca_cert", "subscription", "resource_group", "location", "subnet_id"}
        assert info["endpoint"].startswith("https://127.0.0.1:") and info["location"] == "westus2"
        assert info["resource_group"] == "MC_karp_karp_westus2"
        assert info["subnet_id"].endswith("/virtualNetworks/aks-vnet/subnets/aks-subnet")
        url = (f"{info['endpoint']}/subscriptions/{info['subscription']}/providers/Microsoft.Compute/locations/"
               "westus2/usages?api-version=2026-04-01")
        first = requests.get(url, headers=AUTH, verify=info["ca_cert"], timeout=5)
        second = requests.get(url, headers=AUTH, verify=info["ca_cert"], timeout=5)
        assert first.status_code == 500
        assert second.json()["value"][0]["currentValue"] == 14
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=10)
    assert process.returncode == 0


def test_cli_rejects_bad_flags_in_one_line() -> None:
    process = _run_cli("--quota", "cores")
    _, err = process.communicate(timeout=20)
    assert process.returncode == 2
    assert err.strip() == "karp-sim arm: --quota 'cores': expected NAME=COUNT, e.g. --quota cores=20"
    process = _run_cli("--location", "marsnorth")
    _, err = process.communicate(timeout=20)
    assert process.returncode == 2 and "location 'marsnorth': no SKU catalog" in err
    assert "Traceback" not in err


def test_throttle_on_the_wire(arm: ArmEmulator) -> None:
    from sim.arm import FaultRule

    arm.reset()
    arm.faults.add(FaultRule("throttle", op="create_vm", retry_after=1200, count=1))
    response = _call(arm, "PUT", _vm_url(arm, "aks-429"), data=b"{}")
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "1200"
    assert response.headers["x-ms-ratelimit-remaining-resource"] == "Microsoft.Compute/PutVM3Min;0"
    error = response.json()["error"]
    assert error["code"] == "OperationNotAllowed"
    assert error["details"][0]["code"] == "TooManyRequests"
    assert [(r.op, r.status, r.fault) for r in arm.request_log] == [("create_vm", 429, "throttle")]


def test_faults_given_as_dicts_in_process() -> None:
    with ArmEmulator(faults=[{"op": "get_usages", "kind": "server_error", "status": 503, "count": 1}]) as emulator:
        url = _url(emulator, "/providers/Microsoft.Compute/locations/westus2/usages")
        assert _call(emulator, "GET", url).status_code == 503
        assert _call(emulator, "GET", url).status_code == 200
        assert emulator.faults.fired() == [1]
