"""``karp-provisioner run`` end to end against both emulators: leads, serves probes, SIGTERM hands over."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import provisioner.azure.clients as azure_clients
from provisioner.azure.credentials import StaticCredential
from provisioner.commands.run import main
from sim.arm.emulator import ArmEmulator
from sim.kube.emulator import KubeEmulator
from sim.scenarios import founding


def _holder(kube: KubeEmulator) -> str | None:
    lease = kube.get("leases", "karp-leader-election", "karpenter")
    return None if lease is None else str((lease.get("spec") or {}).get("holderIdentity") or "")


def test_hygint_run_leads_then_releases_the_lease_on_sigterm(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(azure_clients, "resolve_credential", lambda config: StaticCredential("karp-test"))
    for name in [k for k in os.environ if k.startswith("KARP_")]:
        monkeypatch.delenv(name)
    log = tmp_path / "run.log"
    kube = KubeEmulator(region=founding.REGION, tick=0.05)
    founding.seed_cluster(kube)
    arm = ArmEmulator(founding.REGION)
    kube.start()
    endpoint = arm.start()
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    seen: dict[str, Any] = {}

    def terminate_once_leading() -> None:
        deadline = time.monotonic() + 20
        pause = threading.Event()
        while time.monotonic() < deadline and not _holder(kube):
            pause.wait(0.05)
        seen["holder"] = _holder(kube)
        os.kill(os.getpid(), signal.SIGTERM)

    killer = threading.Thread(target=terminate_once_leading, daemon=True)
    try:
        killer.start()
        code = main([
            "--cluster-name", "karpenter", "--subscription-id", endpoint.subscription, "--resource-group", "karpenter",
            "--location", endpoint.location, "--node-resource-group", endpoint.resource_group,
            "--subnet-id", endpoint.subnet_id, "--azure-endpoint", endpoint.endpoint,
            "--azure-ca-file", endpoint.ca_cert, "--kubeconfig", kube.kubeconfig, "--log-file", str(log),
            "--metrics-port", "0", "--health-port", "0", "--lease-namespace", "karpenter",
            "--lease-duration-seconds", "3", "--shutdown-grace-seconds", "2",
        ])
        killer.join(5)
        seen["after"] = _holder(kube)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        arm.stop()
        kube.stop()
    assert code == 0
    assert seen["holder"]  # it led
    assert seen["after"] == ""  # released on the way out: a standby would start at once
    text = log.read_text()
    assert '"event":"leader.acquired"' in text and '"event":"process.stopping"' in text
    assert '"event":"leader.lost"' not in text  # a graceful stop gives the lease back; it is not lost


def test_hygint_run_rejects_a_bad_timeout(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name in [k for k in os.environ if k.startswith("KARP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("KARP_LAUNCH_TIMEOUT_SECONDS", "-5")
    code = main(["--cluster-name", "c", "--subscription-id", "00000000-0000-0000-0000-000000000000",
                 "--resource-group", "rg", "--location", "westus2", "--node-resource-group", "mc",
                 "--subnet-id", "/subscriptions/s/resourceGroups/r/providers/Microsoft.Network/virtualNetworks/v/subnets/s"])
    assert code == 2
    assert "KARP_LAUNCH_TIMEOUT_SECONDS" in capsys.readouterr().err
