"""The bridge to the real planner: snapshot building and the mapping of its Plan."""

from __future__ import annotations

from datetime import UTC, datetime

from provisioner.controller.cluster import ClaimRecord, ClusterView
from provisioner.controller.planning import build_snapshot, solver_planner
from provisioner.controller.provisioning import PlanInput
from provisioner.controller.unavailable import Unavailable, UnavailableOfferings
from provisioner.model.catalog import load_catalog
from provisioner.model.nodepool import NodePool
from provisioner.model.pod import Pod
from provisioner.model.quota import QuotaSnapshot, QuotaUsage
from provisioner.model.requirements import Requirement, Requirements
from provisioner.model.resources import Resources
from provisioner.model.taints import Taint, Toleration
from provisioner.scheduling.overhead import daemonset_overhead

NOW = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)
CATALOG = load_catalog("westus2").types
POOL = NodePool("general-purpose", requirements=Requirements.of(
    Requirement("karpenter.azure.com/sku-family", "In", ("D",)),
    Requirement("kubernetes.io/arch", "In", ("amd64",)),
    Requirement("kubernetes.io/os", "In", ("linux",)),
    Requirement("karpenter.sh/capacity-type", "In", ("on-demand",))))
DS = tuple(Pod("kube-system", n, Resources(cpu, mem * 2**20, 1), owner_kind="DaemonSet", owner_name=n,
               tolerations=(Toleration(operator="Exists"),))
           for n, cpu, mem in (("kube-proxy", 100, 0), ("ip-masq", 50, 50), ("cnm", 50, 50), ("disk", 30, 180),
                               ("file", 20, 190)))
INFLATE = tuple(Pod("default", f"inflate-{i}", Resources(1000, 256_000_000, 1)) for i in range(10))


def _input(quota: bool = True, claims: tuple[ClaimRecord, ...] = ()) -> PlanInput:
    view = ClusterView(INFLATE, (), claims, (POOL,), (), DS)
    snapshot = QuotaSnapshot("westus2", NOW, "azure", {"cores": QuotaUsage("cores", 20, 14)}) if quota else None
    return PlanInput(view, CATALOG, snapshot, claims, NOW, quota)


def test_ctrl_daemonset_overhead_matches_the_founding_log() -> None:
    overhead = daemonset_overhead(DS, POOL)
    assert overhead == Resources(250, 481280 * 1024, 5)
    tainted = NodePool("gpu", taints=(Taint("gpu", "NoSchedule"),))
    picky = (Pod("kube-system", "x", Resources(100, 0, 1), owner_kind="DaemonSet"),)
    assert daemonset_overhead(picky, tainted) == Resources()


def test_ctrl_quota_aware_plan_stays_within_headroom() -> None:
    decisions = solver_planner(UnavailableOfferings(), "westus2")(_input())
    assert sum(c.options[0].vcpus for c in decisions.claims) <= 6
    placed = sum(len(c.pods) for c in decisions.claims)
    blocked = [b for b in decisions.blocked if b.quota is not None]
    assert placed + sum(len(b.pods) for b in blocked) == 10 and placed >= 3
    quota = blocked[0].quota
    assert quota is not None and (quota.name, quota.limit, quota.usage) == ("cores", 20, 14)
    assert quota.new_limit > 20
    assert all(c.requests.to_requests()["pods"] == str(len(c.pods) + 5) for c in decisions.claims)


def test_ctrl_karpenter_mode_picks_the_founding_size() -> None:
    decisions = solver_planner(UnavailableOfferings(), "westus2")(_input(quota=False))
    (claim,) = decisions.claims
    assert claim.options[0].name == "Standard_D16ls_v5"
    assert claim.requests == Resources(10250, 2981280 * 1024, 15)


def test_ctrl_in_flight_claims_take_their_pods_again() -> None:
    claim = ClaimRecord("general-purpose-aaaaa", "general-purpose", "Standard_D16ls_v5", "on-demand", "1",
                        Resources(10250, 0, 15), conditions=({"type": "Launched", "status": "True"},),
                        launched_at=NOW)
    data = _input(quota=False, claims=(claim,))
    snapshot = build_snapshot(data, UnavailableOfferings(), "westus2")
    (in_flight,) = snapshot.in_flight
    assert in_flight.requests == Resources(250, 481280 * 1024, 5)
    assert in_flight.zone == "westus2-1"
    decisions = solver_planner(UnavailableOfferings(), "westus2")(data)
    assert decisions.claims == ()
    assert [n.target for n in decisions.nominations] == ["nodeclaim/general-purpose-aaaaa"]


def test_ctrl_unavailable_entries_reach_the_planner() -> None:
    cache = UnavailableOfferings()
    cache.add(Unavailable("offering", datetime(2026, 11, 29, 19, tzinfo=UTC), "SkuNotAvailable",
                          instance_type="Standard_D16ls_v5", capacity_type="on-demand"))
    snapshot = build_snapshot(_input(quota=False), cache, "westus2")
    assert ("on-demand", "Standard_D16ls_v5", "1") in snapshot.unavailable
    decisions = solver_planner(cache, "westus2")(_input(quota=False))
    assert all(c.options[0].name != "Standard_D16ls_v5" for c in decisions.claims)
