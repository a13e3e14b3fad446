from __future__ import annotations

import io
import json
from typing import Any

import pytest

from provisioner.commands.run import main as run_main
from provisioner.controller.cluster import ClusterView
from provisioner.controller.decisions import Decisions
from provisioner.controller.manager import Controller, ControllerOptions
from provisioner.controller.provisioning import PlanInput
from provisioner.model.nodepool import NodePool
from provisioner.model.pod import Pod
from provisioner.model.resources import Resources
from provisioner.observability.logwriter import LogWriter

SUBNET = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/n"


class Tick:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_ctrl_controller_batches_new_pods_only(cluster: Any, compute: Any, clock: Any) -> None:
    seen: list[PlanInput] = []

    def plan(data: PlanInput) -> Decisions:
        seen.append(data)
        return Decisions()

    out = io.StringIO()
    tick = Tick()
    log = LogWriter(stream=out, level="DEBUG", clock=clock)
    controller = Controller(ControllerOptions("karpenter", SUBNET), cluster, compute, lambda u: plan, lambda: (), log,
                            cluster.event, clock=clock, monotonic=tick)
    pods = tuple(Pod("default", f"p{i}", Resources(1000, 0, 1)) for i in range(2))
    cluster.view_value = ClusterView(pods, (), (), (NodePool("general-purpose"),), (), ())
    assert controller.feed() == 2
    tick.t += 0.5
    assert controller.feed() == 0  # the same pods again are no news
    assert not controller.batcher.ready()
    tick.t += 0.6
    assert controller.batcher.ready()
    assert controller.batcher.take() == ["default/p0", "default/p1"]
    controller.run_pass()
    assert len(seen) == 1 and [p.key for p in seen[0].view.pending] == ["default/p0", "default/p1"]
    assert seen[0].quota_aware
    controller.quota.refresh()
    refresh = [json.loads(x) for x in out.getvalue().splitlines() if '"quota.updated"' in x][-1]
    assert refresh["quotas"] == "cores: 14/20" and refresh["regional"] == {"usage": 14, "limit": 20}
    controller.launcher.shutdown()


def test_ctrl_run_command_names_the_bad_setting(capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(__import__("os").environ):
        if key.startswith("KARP_"):
            monkeypatch.delenv(key)
    assert run_main(["--location", "westus2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("karp-provisioner: setting KARP_CLUSTER_NAME: is required")
    assert "Traceback" not in err
    monkeypatch.setenv("KARP_SUBSCRIPTION_ID", "not-a-guid")
    assert run_main(["--cluster-name", "c", "--resource-group", "rg", "--location", "westus2",
                     "--node-resource-group", "mc", "--subnet-id", SUBNET]) == 2
    assert "KARP_SUBSCRIPTION_ID: must be a GUID" in capsys.readouterr().err


def test_ctrl_run_help_teaches(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        run_main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "KARP_BATCH_IDLE_SECONDS" in out and "examples:" in out and "--mode {quota-aware,karpenter}" in out
