"""Upkeep acting through fake ports: what gets deleted, written and forgotten."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from provisioner.controller.cluster import ClaimRecord
from provisioner.controller.fleet import ClaimInfo, Fleet, NodeInfo, PodInfo, PoolInfo
from provisioner.controller.upkeep import HEALTH_CONDITION, Upkeep, UpkeepOptions
from provisioner.model.logvocab import format_time
from provisioner.model.nodepool import Budget, Disruption, NodePool
from provisioner.model.ports import NicInfo, NicSpec, VmInfo, VmSpec
from provisioner.model.quota import QuotaSnapshot
from provisioner.model.resources import Resources
from provisioner.observability.logwriter import LogWriter

T0 = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)
OURS = {"karpenter.azure.com_cluster": "karpenter"}


@dataclass
class Compute:
    vms: dict[str, VmInfo] = field(default_factory=dict)
    nics: dict[str, NicInfo] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def create_nic(self, spec: NicSpec) -> NicInfo:
        raise AssertionError("upkeep never creates")

    def begin_create_vm(self, spec: VmSpec) -> Any:
        raise AssertionError("upkeep never creates")

    def delete_nic(self, name: str) -> None:
        self.calls.append(f"delete_nic {name}")
        self.nics.pop(name, None)

    def delete_vm(self, name: str) -> None:
        self.calls.append(f"delete_vm {name}")
        self.vms.pop(name, None)

    def get_vm(self, name: str) -> VmInfo | None:
        return self.vms.get(name)

    def list_vms(self, tags: dict[str, str]) -> list[VmInfo]:
        return list(self.vms.values())  # unfiltered on purpose: upkeep must check ownership itself

    def list_nics(self, tags: dict[str, str]) -> list[NicInfo]:
        return list(self.nics.values())

    def read_quota(self) -> QuotaSnapshot:
        return QuotaSnapshot("westus2", T0, "azure")


@dataclass
class Port:
    state: Fleet = field(default_factory=Fleet)
    calls: list[str] = field(default_factory=list)
    statuses: list[ClaimRecord] = field(default_factory=list)

    def fleet(self) -> Fleet:
        return self.state

    def delete_nodeclaim(self, name: str) -> None:
        self.calls.append(f"delete_nodeclaim {name}")

    def update_nodeclaim_status(self, claim: ClaimRecord) -> None:
        self.statuses.append(claim)

    def delete_node(self, name: str) -> None:
        self.calls.append(f"delete_node {name}")

    def taint_node(self, name: str, key: str, effect: str) -> None:
        self.calls.append(f"taint {name} {key}:{effect}")

    def evict_pod(self, namespace: str, name: str) -> None:
        self.calls.append(f"evict {namespace}/{name}")

    def set_nodepool_condition(self, pool: str, type_: str, status: str, reason: str, message: str,
                               now: datetime) -> None:
        self.calls.append(f"condition {pool} {type_}={status} {reason}")

    def event(self, kind: str, namespace: str, name: str, type_: str, reason: str, message: str) -> None:
        self.calls.append(f"event {kind}/{name} {reason}")


@dataclass
class Tracker:
    records: dict[str, ClaimRecord] = field(default_factory=dict)
    claim_pods: dict[str, Any] = field(default_factory=dict)

    def store(self, record: ClaimRecord) -> None:
        self.records[record.name] = record

    def forget(self, name: str) -> None:
        self.records.pop(name, None)
        self.claim_pods.pop(name, None)


def vm(name: str, tags: dict[str, str], state: str = "Succeeded") -> VmInfo:
    return VmInfo(f"/s/providers/Microsoft.Compute/virtualMachines/{name}", name, "Standard_D4s_v5", "1", False, state,
                  tags, T0)


def claim(name: str, launched: str = "Unknown", node: str = "", initialized: str = "Unknown",
          created: datetime = T0) -> ClaimInfo:
    conditions = tuple({"type": t, "status": s, "lastTransitionTime": format_time(created)}
                       for t, s in (("Launched", launched), ("Registered", initialized), ("Initialized", initialized)))
    pid = f"azure:///s/providers/Microsoft.Compute/virtualMachines/aks-{name}" if launched == "True" else ""
    return ClaimInfo(ClaimRecord(name, "gp", "Standard_D4s_v5", "on-demand", "1", Resources(), provider_id=pid,
                                 node_name=node, conditions=conditions), created)


def rig(state: Fleet, compute: Compute, now: datetime) -> tuple[Upkeep, Port, Tracker, io.StringIO]:
    out = io.StringIO()
    port, tracker = Port(state), Tracker()
    options = UpkeepOptions("karpenter", launch_timeout=60, registration_timeout=120, gc_grace=30, recovery_grace=10)
    upkeep = Upkeep(options, port, compute, tracker, LogWriter(stream=out, level="DEBUG"), clock=lambda: now)
    return upkeep, port, tracker, out


def events(out: io.StringIO) -> list[str]:
    return [json.loads(line)["event"] for line in out.getvalue().splitlines()]


def test_launch_timeout_deletes_vm_nic_and_claim_and_marks_the_nodepool() -> None:
    compute = Compute({"aks-slow": vm("aks-slow", OURS, "Creating")},
                      {"aks-slow": NicInfo("/nics/aks-slow", "aks-slow", "10.0.0.4", dict(OURS))})
    upkeep, port, tracker, out = rig(Fleet(claims=(claim("slow"),)), compute, T0 + timedelta(seconds=61))
    tracker.store(claim("slow").record)
    [expired] = upkeep.check_liveness(port.state, T0 + timedelta(seconds=61))
    assert expired.reason == "LaunchTimeout"
    assert compute.calls == ["delete_vm aks-slow", "delete_nic aks-slow"]
    assert "delete_nodeclaim slow" in port.calls
    assert f"condition gp {HEALTH_CONDITION}=False LaunchTimeout" in port.calls
    assert "slow" not in tracker.records  # the provisioning loop no longer counts it in flight
    assert "nodeclaim.launch_timeout" in events(out) and upkeep.stats["launch_timeouts"] == 1


def test_terminate_leaves_a_vm_of_another_cluster_alone() -> None:
    compute = Compute({"aks-x": vm("aks-x", {"karpenter.azure.com_cluster": "other"})})
    upkeep, port, _, _ = rig(Fleet(), compute, T0)
    upkeep.terminate("x", "", "test")
    assert compute.calls == [] and port.calls == ["delete_nodeclaim x"]


def test_garbage_collection_never_touches_untagged_or_foreign_resources() -> None:
    compute = Compute(
        {"aks-orphan": vm("aks-orphan", OURS), "aks-foreign": vm("aks-foreign", {"karpenter.azure.com_cluster": "b"}),
         "web-1": vm("web-1", {})},
        {"aks-free": NicInfo("/n/aks-free", "aks-free", "", dict(OURS)), "web-1-nic": NicInfo("/n/w", "web-1-nic", "", {})},
    )
    now = T0 + timedelta(hours=1)
    upkeep, port, _, out = rig(Fleet(), compute, now)
    upkeep.first_seen = {"nic:aks-free": T0, "nic:web-1-nic": T0}
    upkeep.collect_garbage(port.state, now)
    assert sorted(compute.calls) == ["delete_nic aks-free", "delete_vm aks-orphan"]
    assert set(compute.vms) == {"aks-foreign", "web-1"} and set(compute.nics) == {"web-1-nic"}
    assert events(out).count("gc.vm_deleted") == 1 and upkeep.stats["gc_nics"] == 1


def test_garbage_collection_removes_a_claim_whose_vm_is_gone() -> None:
    upkeep, port, _, out = rig(Fleet(claims=(claim("gone", "True", node="aks-gone"),)), Compute(), T0)
    upkeep.collect_garbage(port.state, T0)
    assert port.calls == ["delete_node aks-gone", "delete_nodeclaim gone"] and "gc.nodeclaim_deleted" in events(out)


def test_recovery_adopts_the_vm_an_earlier_run_created() -> None:
    compute = Compute({"aks-left": vm("aks-left", OURS)})
    upkeep, port, tracker, out = rig(Fleet(claims=(claim("left"), claim("done", "True"))), compute, T0)
    upkeep.recover(port.state, T0)
    [written] = port.statuses
    assert written.name == "left" and written.status_of("Launched") == "True"
    assert written.provider_id.endswith("/virtualMachines/aks-left")
    assert set(tracker.records) == {"left", "done"} and compute.calls == []
    assert "vm.adopted" in events(out) and upkeep.stats["adopted"] == 1 and upkeep.stats["resumed"] == 1


def test_disruption_taints_evicts_then_terminates() -> None:
    pool = PoolInfo(NodePool("gp", disruption=Disruption("WhenEmpty", "Never", (Budget("1"),)), expire_after="1h"))
    old = claim("old", "True", node="n-old", initialized="True", created=T0 - timedelta(hours=2))
    pods = (PodInfo("default", "web", "n-old"),)
    state = Fleet((old,), (NodeInfo("n-old", old.record.provider_id, "gp", True),), pods, (pool,), 0, {"n-old": pods})
    compute = Compute({"aks-old": vm("aks-old", OURS)})
    upkeep, port, _, out = rig(state, compute, T0)
    [candidate] = upkeep.disrupt(state, T0).disrupt
    assert candidate.reason == "Expired"
    assert port.calls[:2] == ["taint n-old karpenter.sh/disrupted:NoSchedule", "evict default/web"]
    assert compute.calls == ["delete_vm aks-old"] and "delete_nodeclaim old" in port.calls
    assert "disruption.started" in events(out) and upkeep.stats["disrupted_expired"] == 1


def test_a_failing_step_is_counted_and_the_others_still_run() -> None:
    class Broken(Compute):
        def list_vms(self, tags: dict[str, str]) -> list[VmInfo]:
            raise RuntimeError("boom")

    upkeep, port, _, _ = rig(Fleet(claims=(claim("slow"),)), Broken(), T0 + timedelta(hours=1))
    upkeep.tick(force=True)
    assert upkeep.stats["errors"] == 1 and "garbage: RuntimeError: boom" in upkeep.errors[0]
    assert "delete_nodeclaim slow" in port.calls  # recovery and liveness still ran


def test_the_nodepool_is_healthy_again_once_a_claim_registers_after_the_failure() -> None:
    failed = {"type": HEALTH_CONDITION, "status": "False", "reason": "LaunchTimeout",
              "lastTransitionTime": format_time(T0)}
    pool = PoolInfo(NodePool("gp"), (failed,))
    before = claim("before", "True", node="n-before", initialized="True", created=T0 - timedelta(minutes=1))
    upkeep, port, _, _ = rig(Fleet(claims=(before,), pools=(pool,)), Compute(), T0)
    upkeep.check_liveness(port.state, T0)
    assert not any(c.startswith("condition") for c in port.calls)  # registered before the failure: no news
    after = claim("after", "True", node="n-after", initialized="True", created=T0 + timedelta(minutes=1))
    port.state = Fleet(claims=(before, after), pools=(pool,))
    upkeep.check_liveness(port.state, T0 + timedelta(minutes=2))
    assert f"condition gp {HEALTH_CONDITION}=True {HEALTH_CONDITION}" in port.calls
