"""The bridge to the pure planner: controller snapshot in, ``Decisions`` out.

``build_snapshot`` freezes what the controller gathered into the planner's ``Snapshot``
(pods, nodes, in-flight NodeClaims, NodePools, catalog, quota, unavailable offerings,
DaemonSet overhead per NodePool, now); ``to_decisions`` maps the planner's ``Plan`` back
into the controller's terms, grouping the pods that wait for the same reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from provisioner.controller.cluster import ClaimRecord
from provisioner.controller.decisions import Blocked, ClaimDecision, Decisions, Nomination, QuotaBlock
from provisioner.controller.provisioning import PlanInput
from provisioner.controller.unavailable import UnavailableOfferings
from provisioner.model.catalog import Catalog
from provisioner.model.nodepool import Node, NodeClaim, NodeClaimStatus
from provisioner.model.pod import Pod
from provisioner.model.resources import Resources
from provisioner.scheduling.overhead import overhead_by_pool
from provisioner.scheduling.plan import Plan, ReasonCode
from provisioner.scheduling.snapshot import Snapshot

__all__ = ["build_snapshot", "planner", "solver_planner", "to_decisions"]

_SCOPES = {
    ReasonCode.QUOTA_REGIONAL: "regional",
    ReasonCode.QUOTA_FAMILY: "family",
    ReasonCode.QUOTA_SPOT: "spot",
}


def _claim(record: ClaimRecord, overhead: Resources, region: str) -> NodeClaim:
    """An in-flight claim as the planner sees it. Its requests are only the DaemonSet overhead: the pods
    it was made for are still pending, and the planner places them again (onto it, first)."""
    launched = record.status_of("Launched") == "True"
    status = NodeClaimStatus.PLANNED
    if launched:
        status = NodeClaimStatus.REGISTERED if record.node_name else NodeClaimStatus.LAUNCHED
    return NodeClaim(
        name=record.name, nodepool=record.nodepool, requests=overhead, instance_types=(record.instance_type,),
        instance_type=record.instance_type, capacity_type=record.capacity_type,
        zone=f"{region}-{record.zone}" if record.zone else "", status=status,
        node_name=record.node_name, provider_id=record.provider_id, created_at=record.launched_at,
    )


def unavailable_keys(unavailable: UnavailableOfferings, catalog: Catalog, snapshot: PlanInput) -> frozenset[tuple[str, str, str]]:
    entries = unavailable.entries(snapshot.now)
    if not entries:
        return frozenset()
    out: set[tuple[str, str, str]] = set()
    for it in catalog.types:
        for o in it.offerings:
            if any(e.blocks(it, o.capacity_type, o.zone) for e in entries):
                out.add((o.capacity_type, it.name, o.zone))
    return frozenset(out)


EPHEMERAL_TAINTS = ("karpenter.sh/unregistered", "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def _settled(node: Node, launching: set[str]) -> Node:
    """A node still coming up is planned as it will be: without the taints registration removes."""
    if node.name not in launching and not any(t.key == EPHEMERAL_TAINTS[0] for t in node.taints):
        return node
    return replace(node, taints=tuple(t for t in node.taints if t.key not in EPHEMERAL_TAINTS), ready=True)


def build_snapshot(data: PlanInput, unavailable: UnavailableOfferings, region: str) -> Snapshot:
    view = data.view
    launching = {c.node_name for c in data.in_flight if c.node_name and c.status_of("Initialized") != "True"}
    catalog = Catalog(region=region, types=data.catalog, read_at=None, source="controller")
    overhead = overhead_by_pool(view.daemonset_pods, view.nodepools)
    return Snapshot(
        pods=view.pending,
        nodepools=view.nodepools,
        catalog=catalog,
        nodes=tuple(_settled(n.node, launching) for n in view.nodes),
        in_flight=tuple(_claim(c, overhead.get(c.nodepool, Resources()), region) for c in data.in_flight
                        if c.status_of("Initialized") != "True"),
        quota=data.quota if data.quota_aware else None,
        unavailable=unavailable_keys(unavailable, catalog, data),
        daemonset_overhead=overhead,
        node_classes={nc.name: nc for nc in view.nodeclasses},
        now=data.now,
    )


def _bare_zone(label: str, region: str) -> str:
    """``westus2-1`` (the zone label) -> ``1`` (the zone a VM is created in)."""
    return label.removeprefix(f"{region}-")


def to_decisions(plan: Plan, data: PlanInput, region: str) -> Decisions:
    pods = {p.key: p for p in data.view.pending}
    pools = {p.name: p for p in data.view.nodepools}
    types = {it.name: it for it in data.catalog}
    claims: list[ClaimDecision] = []
    for c in plan.nodeclaims:
        pool = pools.get(c.nodepool)
        if pool is None:
            continue
        names = [c.instance_type] + [o.name for o in c.options if o.name != c.instance_type]
        options = tuple(types[n] for n in dict.fromkeys(names) if n in types)
        reqs = tuple({"key": r.key, "operator": r.operator, "values": list(r.values)}
                     for r in c.to_nodeclaim().requirements.items)
        claims.append(ClaimDecision(pool, options, c.capacity_type, _bare_zone(c.zone, region), c.requests,
                                    tuple(pods[k] for k in c.pods if k in pods), reqs,
                                    zones=tuple(_bare_zone(z, region) for z in c.zones)))
    targets: dict[str, list[Pod]] = {}
    for p in plan.placements:
        if p.pod in pods:
            targets.setdefault(f"{p.kind}/{p.target}", []).append(pods[p.pod])
    nominations = tuple(Nomination(t, tuple(ps)) for t, ps in targets.items())
    groups: dict[tuple[Any, ...], list[Pod]] = {}
    reasons: dict[tuple[Any, ...], Any] = {}
    for u in plan.unplaced:
        r = u.reason
        key = (r.code, r.nodepool, r.quota, r.limit, r.usage, r.new_limit, r.message if r.quota == "" else "")
        if u.pod in pods:
            groups.setdefault(key, []).append(pods[u.pod])
            reasons.setdefault(key, r)
    blocked: list[Blocked] = []
    for key, members in groups.items():
        r = reasons[key]
        quota: QuotaBlock | None = None
        scope = _SCOPES.get(r.code)
        if scope is not None and r.limit is not None and r.usage is not None:
            needed = r.needed or 0
            quota = QuotaBlock(scope, r.quota, region, r.limit, r.usage, needed,
                               r.new_limit if r.new_limit is not None else r.usage + needed, r.left)
        text = quota.describe() if quota is not None else r.message
        blocked.append(Blocked(tuple(members), text, r.nodepool, quota, r.code == ReasonCode.NODEPOOL_LIMIT))
    return Decisions(tuple(claims), nominations, tuple(blocked))


def planner(
    unavailable: UnavailableOfferings, region: str, plan: Callable[[Snapshot, bool], Plan]
) -> Callable[[PlanInput], Decisions]:
    """A ``PlanFunction`` over the pure planner ``plan(snapshot, quota_aware) -> Plan``."""

    def run(data: PlanInput) -> Decisions:
        snapshot = build_snapshot(data, unavailable, region)
        return to_decisions(plan(snapshot, data.quota_aware), data, region)

    return run


def solver_planner(unavailable: UnavailableOfferings, region: str) -> Callable[[PlanInput], Decisions]:
    """The ``PlanFunction`` over ``provisioner.scheduling.solver.plan``."""
    from provisioner.scheduling.solver import PlanOptions, plan

    return planner(unavailable, region, lambda snapshot, quota_aware: plan(snapshot, PlanOptions(quota_aware=quota_aware)))
