from __future__ import annotations

import io
import json
from dataclasses import replace
from datetime import timedelta
from typing import Any

from provisioner.controller.cluster import ClusterView, NodeRecord
from provisioner.controller.decisions import Blocked, ClaimDecision, Decisions, QuotaBlock
from provisioner.controller.launch import Launcher
from provisioner.controller.lifecycle import Lifecycle
from provisioner.controller.provisioning import PlanInput, Provisioner, ProvisionerConfig
from provisioner.controller.quota_cache import QuotaCache
from provisioner.controller.reporting import Reporter
from provisioner.controller.unavailable import UnavailableOfferings
from provisioner.model.errors import classify
from provisioner.model.nodepool import Limits, Node, NodePool
from provisioner.model.pod import Pod
from provisioner.model.resources import Resources

SUBNET = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/n"
REGIONAL = (
    "Operation could not be completed as it results in exceeding approved Total Regional Cores quota. "
    "Additional details - Deployment Model: Resource Manager, Location: westus2, Current Limit: 20, "
    "Current Usage: 14, Additional Required: 16, (Minimum) New Limit Required: 30. Submit a request for Quota increase"
)
POOL = NodePool("general-purpose")
POD = Resources(1000, 256_000_000, 1)


class Rig:
    def __init__(self, cluster: Any, compute: Any, clock: Any, types: list[Any], plan: Any,
                 pool: NodePool = POOL) -> None:
        self.out = io.StringIO()
        from provisioner.observability.logwriter import LogWriter

        self.log = LogWriter(stream=self.out, level="DEBUG", clock=clock)
        self.unavailable = UnavailableOfferings()
        self.quota = QuotaCache(compute.read_quota, timedelta(seconds=60), clock)
        self.launcher = Launcher(compute, self.log, self.unavailable, clock, quota=self.quota, workers=2)
        self.reporter = Reporter(self.log, cluster.event, clock)
        self.replans = 0
        self.results: list[Any] = []
        self.provisioner = Provisioner(cluster, plan, self.launcher, self.unavailable, lambda: tuple(types), self.log,
                                       self.reporter, ProvisionerConfig("karpenter", SUBNET), clock, self.quota,
                                       on_launched=self._done)
        self.lifecycle = Lifecycle(cluster, self.provisioner, self.reporter, self.log, clock, self._replan, 5.0)
        pods = tuple(Pod("default", f"inflate-{i}", POD) for i in range(3))
        cluster.view_value = ClusterView(pods, (), (), (pool,), (), ())

    def _done(self, result: Any) -> None:
        self.results.append(result)
        self.lifecycle.launched(result)

    def _replan(self) -> None:
        self.replans += 1

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.getvalue().splitlines()]


def one_claim(types: list[Any], capacity: str = "on-demand") -> Any:
    def plan(data: PlanInput) -> Decisions:
        if data.in_flight:
            return Decisions()
        pool = data.view.nodepools[0]
        reqs = Resources(250, 0, 0).__add__(POD.times(len(data.view.pending)))
        return Decisions((ClaimDecision(pool, tuple(t for t in data.catalog if t.name in {x.name for x in types}),
                                        capacity, "", reqs, data.view.pending),))

    return plan


def test_ctrl_pass_creates_claim_launches_and_registers(cluster: Any, compute: Any, clock: Any,
                                                        instance_type: Any) -> None:
    d4 = instance_type("Standard_D4ls_v5", 4)
    rig = Rig(cluster, compute, clock, [d4], one_claim([d4]))
    decisions = rig.provisioner.reconcile()
    assert decisions is not None and len(decisions.claims) == 1
    rig.launcher.shutdown(wait=True)
    (name,) = cluster.claims
    assert name.startswith("general-purpose-")
    claim = cluster.claims[name]
    assert claim.status_of("Launched") == "True" and claim.provider_id == f"azure:///vms/aks-{name}"
    nominated = [e for e in cluster.events if e[4] == "Nominated"]
    assert len(nominated) == 3 and nominated[0][5] == f"Pod should schedule on: nodeclaim/{name}"
    assert any(e[0] == "NodeClaim" and e[4] == "Launched" for e in cluster.events)
    created = next(r for r in rig.lines() if r["event"] == "nodeclaim.created")
    assert created["NodePool"] == {"name": "general-purpose"}
    assert created["instance-types"] == "Standard_D4ls_v5"
    # a second pass sees the claim in flight and creates nothing more
    rig.provisioner.reconcile()
    assert len(cluster.claims) == 1 and sum(c.startswith("create_vm") for c in compute.calls) == 1
    # the Node appears: registered, taint removed, then initialised
    node = Node(f"aks-{name}", Resources(3860, 12 * 2**30, 250), ready=True)
    view = replace(cluster.view(), nodes=(NodeRecord(node, claim.provider_id, (
        {"key": "karpenter.sh/unregistered", "effect": "NoExecute"},)),))
    rig.lifecycle.tick(view)
    assert cluster.patches and cluster.patches[0][2] == ["karpenter.sh/unregistered"]
    assert cluster.patches[0][1]["karpenter.sh/nodepool"] == "general-purpose"
    claim = cluster.claims[name]
    assert claim.status_of("Registered") == "True" and claim.status_of("Ready") == "True"
    assert claim.node_name == f"aks-{name}"
    events = [r["event"] for r in rig.lines()]
    assert "nodeclaim.registered" in events and "nodeclaim.initialized" in events


def test_ctrl_quota_refusal_fails_claim_says_why_and_replans(cluster: Any, compute: Any, clock: Any,
                                                            instance_type: Any) -> None:
    d16 = instance_type("Standard_D16ls_v5", 16)
    compute.fail_vm["Standard_D16ls_v5"] = classify("OperationNotAllowed", REGIONAL, 409)
    rig = Rig(cluster, compute, clock, [d16], one_claim([d16]))
    rig.provisioner.reconcile()
    rig.launcher.shutdown(wait=True)
    (name,) = cluster.claims
    claim = cluster.claims[name]
    launched = next(c for c in claim.conditions if c["type"] == "Launched")
    assert launched["status"] == "False" and launched["reason"] == "SubscriptionQuotaReached"
    assert "Total Regional Cores quota" in launched["message"]
    assert rig.replans == 1
    warnings = {(e[0], e[4]) for e in cluster.events if e[3] == "Warning"}
    assert ("NodePool", "QuotaExceeded") in warnings and ("NodeClaim", "InsufficientCapacityError") in warnings
    assert ("Pod", "FailedScheduling") in warnings
    pool_event = next(e for e in cluster.events if e[0] == "NodePool")
    assert "limit 20" in pool_event[5] and "usage 14" in pool_event[5] and "30" in pool_event[5]
    # the failed claim is not in flight any more; the next plan runs without D16
    assert rig.provisioner.gather().in_flight == ()
    assert not any(o.available for o in rig.provisioner.gather().catalog[0].offerings if o.capacity_type == "on-demand")
    clock.advance(6)
    rig.lifecycle.tick(cluster.view())
    assert cluster.deleted == [name] and cluster.claims == {}
    assert compute.vms == {} and compute.nics == {}


def test_ctrl_nodepool_limit_is_never_exceeded(cluster: Any, compute: Any, clock: Any, instance_type: Any) -> None:
    d16 = instance_type("Standard_D16ls_v5", 16)
    pool = NodePool("general-purpose", limits=Limits(cpu_m=8000))
    rig = Rig(cluster, compute, clock, [d16], one_claim([d16]), pool=pool)
    rig.provisioner.reconcile()
    rig.launcher.shutdown(wait=True)
    assert cluster.claims == {} and not any(c.startswith("create_vm") for c in compute.calls)
    assert any(r["event"] == "nodepool.limit_reached" for r in rig.lines())
    assert any(e[0] == "NodePool" and e[4] == "NodePoolLimitReached" for e in cluster.events)


def test_ctrl_blocked_pods_get_quota_events_once(cluster: Any, compute: Any, clock: Any) -> None:
    block = QuotaBlock("regional", "cores", "westus2", 20, 14, 4, 24)

    def plan(data: PlanInput) -> Decisions:
        return Decisions(blocked=(Blocked(data.view.pending, block.describe(), "general-purpose", block),))

    rig = Rig(cluster, compute, clock, [], plan)
    rig.provisioner.reconcile()
    rig.provisioner.reconcile()
    lines = [r for r in rig.lines() if r["event"] == "quota.blocked"]
    assert len(lines) == 1
    assert lines[0]["quota"] == {"scope": "regional", "name": "cores", "region": "westus2", "limit": 20, "usage": 14,
                                 "required": 4, "newLimit": 24}
    pod_events = [e for e in cluster.events if e[0] == "Pod"]
    assert len(pod_events) == 3
    assert "limit 20, usage 14" in pod_events[0][5] and "a limit of 24 would place them" in pod_events[0][5]
    assert [e[4] for e in cluster.events if e[0] == "NodePool"] == ["QuotaExceeded"]
    rig.launcher.shutdown()


def test_ctrl_nodepool_limit_counts_existing_nodes_and_memory(cluster: Any, compute: Any, clock: Any,
                                                              instance_type: Any) -> None:
    d4 = instance_type("Standard_D4ls_v5", 4)
    existing = Node("aks-general-purpose-old", Resources(3860, 6 * 2**30, 250),
                    labels=(("karpenter.sh/nodepool", "general-purpose"),))
    for limits in (Limits(nodes=1), Limits(memory=8 * 2**30 + 1)):
        pool = NodePool("general-purpose", limits=limits)
        rig = Rig(cluster, compute, clock, [d4], one_claim([d4]), pool=pool)
        cluster.view_value = replace(cluster.view_value, nodes=(NodeRecord(existing, "azure:///old"),))
        rig.provisioner.reconcile()
        rig.launcher.shutdown(wait=True)
        assert cluster.claims == {}, limits
        assert any(r["event"] == "nodepool.limit_reached" for r in rig.lines())
    pool = NodePool("general-purpose", limits=Limits(nodes=2, memory=20 * 2**30))
    rig = Rig(cluster, compute, clock, [d4], one_claim([d4]), pool=pool)
    cluster.view_value = replace(cluster.view_value, nodes=(NodeRecord(existing, "azure:///old"),))
    rig.provisioner.reconcile()
    rig.launcher.shutdown(wait=True)
    assert len(cluster.claims) == 1
