"""Disruption decisions: emptiness after consolidateAfter, expiry, budgets, do-not-disrupt."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from provisioner.controller.cluster import ClaimRecord
from provisioner.controller.disruption import EMPTY, EXPIRED, allowed, parse_duration, plan
from provisioner.controller.fleet import DISRUPTED_TAINT, ClaimInfo, Fleet, NodeInfo, PodInfo, PoolInfo
from provisioner.model.nodepool import Budget, Disruption, NodePool
from provisioner.model.resources import Resources

T0 = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)


def pool(consolidate_after: str = "30s", expire_after: str = "720h", budgets: tuple[Budget, ...] = (Budget("100%"),)
         ) -> PoolInfo:
    return PoolInfo(NodePool("gp", disruption=Disruption("WhenEmpty", consolidate_after, budgets),
                             expire_after=expire_after))


def claim(name: str, created: datetime = T0, initialized: bool = True, deleting: bool = False) -> ClaimInfo:
    conditions = ({"type": "Initialized", "status": "True" if initialized else "Unknown"},)
    return ClaimInfo(ClaimRecord(name, "gp", "Standard_D4s_v5", "on-demand", "1", Resources(), node_name=f"n-{name}",
                                 conditions=conditions, deleting=deleting), created)


def fleet(claims: list[ClaimInfo], pods: list[PodInfo], p: PoolInfo, pending: int = 0,
          tainted: tuple[str, ...] = ()) -> Fleet:
    nodes = tuple(NodeInfo(f"n-{c.name}", "", "gp", True, taints=(DISRUPTED_TAINT,) if c.name in tainted else ())
                  for c in claims)
    by_node: dict[str, tuple[PodInfo, ...]] = {}
    for pod in pods:
        by_node[pod.node] = (*by_node.get(pod.node, ()), pod)
    return Fleet(tuple(claims), nodes, tuple(pods), (p,), pending, by_node)


@pytest.mark.parametrize(("text", "seconds"), [("720h", 720 * 3600), ("30s", 30), ("1h30m", 5400), ("0s", 0),
                                               ("250ms", 0.25), ("Never", None), ("", None), ("5 minutes", None)])
def test_durations(text: str, seconds: float | None) -> None:
    value = parse_duration(text)
    assert (value.total_seconds() if value is not None else None) == seconds


def test_budgets_by_count_percentage_and_reason() -> None:
    p = NodePool("gp", disruption=Disruption(budgets=(Budget("10%"),)))
    assert allowed(p, EMPTY, 25) == 3  # rounded up
    assert allowed(p, EMPTY, 0) == 0
    p = NodePool("gp", disruption=Disruption(budgets=(Budget("5"), Budget("0", reasons=("Expired",)))))
    assert allowed(p, EMPTY, 100) == 5 and allowed(p, EXPIRED, 100) == 0
    assert allowed(NodePool("gp", disruption=Disruption(budgets=(Budget("x"),))), EMPTY, 10) == 0


def test_empty_node_waits_for_consolidate_after() -> None:
    f = fleet([claim("a"), claim("b")], [PodInfo("default", "web", "n-b"), PodInfo("kube-system", "ds", "n-a",
                                                                                    daemonset=True)], pool("30s"))
    first = plan(f, T0, {})
    assert first.disrupt == () and first.empty_since == {"n-a": T0}
    later = plan(f, T0 + timedelta(seconds=30), first.empty_since)
    assert [(c.claim, c.reason, c.pods) for c in later.disrupt] == [("a", EMPTY, ())]


def test_no_emptiness_while_pods_are_pending_or_when_never() -> None:
    f = fleet([claim("a")], [], pool("0s"), pending=2)
    assert plan(f, T0, {}).disrupt == ()
    assert plan(fleet([claim("a")], [], pool("Never")), T0 + timedelta(days=1), {"n-a": T0}).disrupt == ()
    assert plan(fleet([claim("a", initialized=False)], [], pool("0s")), T0, {}).disrupt == ()


def test_expired_nodes_are_replaced_and_their_pods_evicted() -> None:
    pods = [PodInfo("default", "web", "n-old"), PodInfo("kube-system", "ds", "n-old", daemonset=True)]
    f = fleet([claim("old", created=T0 - timedelta(hours=2)), claim("new")], pods, pool("Never", "1h"))
    [candidate] = plan(f, T0, {}).disrupt
    assert candidate.claim == "old" and candidate.reason == EXPIRED
    assert [p.key for p in candidate.pods] == ["default/web"]


def test_do_not_disrupt_pods_hold_their_node() -> None:
    pods = [PodInfo("default", "batch", "n-old", do_not_disrupt=True)]
    result = plan(fleet([claim("old", created=T0 - timedelta(hours=2))], pods, pool("Never", "1h")), T0, {})
    assert result.disrupt == () and "do-not-disrupt" in result.held[0][1]


def test_budget_limits_how_many_go_at_once_counting_those_in_progress() -> None:
    old = T0 - timedelta(hours=2)
    claims = [claim(f"c{i}", created=old + timedelta(minutes=i)) for i in range(4)]
    one = pool("Never", "1h", (Budget("1"),))
    assert [c.claim for c in plan(fleet(claims, [], one), T0, {}).disrupt] == ["c0"]
    # one already being disrupted (tainted): the budget is used up
    assert plan(fleet(claims, [], one, tainted=("c3",)), T0, {}).disrupt == ()
    half = pool("Never", "1h", (Budget("50%"),))
    assert len(plan(fleet(claims, [], half), T0, {}).disrupt) == 2


def test_scheduled_budget_applies_only_within_its_window() -> None:
    from datetime import UTC, datetime

    freeze = Budget("0", schedule="0 9 * * 1-5", duration="8h")  # no disruption in business hours
    pool = NodePool("gp", disruption=Disruption(budgets=(Budget("100%"), freeze)))
    monday_noon = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    monday_night = datetime(2026, 11, 30, 22, 0, tzinfo=UTC)
    assert allowed(pool, EMPTY, 10, monday_noon) == 0
    assert allowed(pool, EMPTY, 10, monday_night) == 10
    unreadable = NodePool("gp", disruption=Disruption(budgets=(Budget("100%"), Budget("0", schedule="nonsense", duration="1h"))))
    assert allowed(unreadable, EMPTY, 10, monday_night) == 0  # an unreadable schedule keeps the budget in force
