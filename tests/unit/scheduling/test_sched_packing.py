"""Packing primitives against brute force on small generated instances."""

from __future__ import annotations

import itertools
from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from provisioner.scheduling.candidates import Option
from provisioner.scheduling.ledger import Ledger
from provisioner.scheduling.packing import Demand, fill, fit_count, pack_cheapest, pack_karpenter
from provisioner.scheduling.scarcity import pack_scarce

GIB = 2**30


def option(rank: int, vcpus: int, price: float, mem_gib: int = 4, pods: int = 110) -> Option:
    return Option(f"size-{rank}", "on-demand", price, vcpus, "fam", vcpus * 1000 - 100, mem_gib * GIB, pods,
                  100 * GIB, vcpus * 1000, mem_gib * GIB, (), rank)


sizes = st.lists(
    st.tuples(st.integers(1, 16), st.integers(1, 400)), min_size=1, max_size=5, unique_by=lambda t: t[0]
).map(lambda xs: [option(i, v, p / 100) for i, (v, p) in enumerate(sorted(xs, key=lambda t: (t[1], t[0])))])


def brute_cover(fits: list[tuple[int, float]], n: int) -> float:
    @cache
    def best(k: int) -> float:
        if k <= 0:
            return 0.0
        return min(price + best(k - f) for f, price in fits)

    return best(n)


@settings(max_examples=80, deadline=None)
@given(sizes, st.integers(1, 300), st.sampled_from([300, 700, 1000, 2500]))
def test_one_class_cheapest_is_optimal(options: list[Option], n: int, cpu: int) -> None:
    req = (cpu, GIB // 4, 1, 0)
    fits = [(fit_count(o.cpu, o.mem, o.pods, o.eph, req), o.price) for o in options]
    fits = [(f, p) for f, p in fits if f > 0]
    demand = Demand([req], [n])
    bins = pack_cheapest(demand, options, Ledger(None, {}), "p")
    if not fits:
        assert not bins and demand.pods == n
        return
    assert demand.pods == 0
    cost = sum(b.option.price * b.copies for b in bins)
    assert abs(cost - brute_cover(fits, n)) < 1e-6
    for b in bins:
        assert b.option.fits(*b.used)


@settings(max_examples=80, deadline=None)
@given(sizes, st.integers(1, 60), st.integers(0, 24), st.sampled_from([300, 1000, 2500]))
def test_one_class_scarce_places_the_most_pods_within_budget(options: list[Option], n: int, budget: int,
                                                              cpu: int) -> None:
    req = (cpu, GIB // 4, 1, 0)
    demand = Demand([req], [n])
    ledger = Ledger({"cores": budget}, {})
    bins = pack_scarce(demand, options, ledger, "p")
    used = sum(b.option.vcpus * b.copies for b in bins)
    placed = sum(b.pods for b in bins)
    assert used <= budget and placed == n - demand.pods
    # brute force: every multiset of sizes within the budget
    items = [(o.vcpus, min(fit_count(o.cpu, o.mem, o.pods, o.eph, req), n)) for o in options]
    best = 0
    for counts in itertools.product(*(range(budget // v + 1) for v, _ in items)):
        if sum(c * v for c, (v, _) in zip(counts, items, strict=True)) <= budget:
            best = max(best, min(n, sum(c * f for c, (_, f) in zip(counts, items, strict=True))))
    assert placed == best


@settings(max_examples=60, deadline=None)
@given(sizes, st.lists(st.tuples(st.sampled_from([250, 500, 1000, 3000]), st.integers(1, 30)), min_size=1,
                       max_size=4, unique_by=lambda t: t[0]), st.booleans())
def test_several_classes_fit_and_all_placed_without_budgets(options: list[Option],
                                                             classes: list[tuple[int, int]], karpenter: bool) -> None:
    reqs = [(cpu, GIB // 8, 1, 0) for cpu, _ in classes]
    demand = Demand(reqs, [n for _, n in classes])
    if karpenter:
        bins = pack_karpenter(demand, options, options, Ledger(None, {}), "p")
    else:
        bins = pack_cheapest(demand, options, Ledger(None, {}), "p")
    placeable = sum(n for (cpu, n) in classes if any(fit_count(o.cpu, o.mem, o.pods, o.eph, (cpu, GIB // 8, 1, 0))
                                                      for o in options))
    assert sum(b.pods for b in bins) == placeable
    for b in bins:
        total = [sum(reqs[i][d] * k for i, k in b.counts) for d in range(4)]
        assert tuple(total) == b.used and b.option.fits(*b.used)


def test_fill_repeats_patterns_by_count() -> None:
    o = option(0, 4, 0.2)
    demand = Demand([(1000, GIB, 1, 0), (250, GIB // 4, 1, 0)], [10, 3])
    counts, used = fill(o, demand)
    assert counts == ((0, 3), (1, 3)) and used == (3750, 3 * GIB + 3 * GIB // 4, 6, 0)
    bins = pack_cheapest(demand, [o], Ledger(None, {}), "p")
    assert sum(b.pods for b in bins) == 13 and demand.pods == 0
    assert sum(b.copies for b in bins) == 4
