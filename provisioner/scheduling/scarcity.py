"""Packing when budgets cannot hold every pod: the most pods first, then the lowest price.

When the quota headroom (or a NodePool limit) is smaller than what the cheapest mix needs,
the objective changes: place as many pods as the budget allows, then pay as little as
possible for them. One class alone is an exact unbounded knapsack over vCPUs (sizes as
items, pods per node as values, capped at the pods waiting): with 6 vCPUs left and pods of
one CPU after a 250m overhead that is a 4-vCPU node holding 3 pods plus a 2-vCPU node holding
1. Several classes are packed greedily: each round takes the size that holds the most pods
per vCPU (on a real fill of one node, from a shortlist judged on the average pod), repeats
the pattern, and right-sizes; right-sizing can free budget, so rounds go on while that
places more.
"""

from __future__ import annotations

from collections.abc import Sequence

from provisioner.scheduling.candidates import Option
from provisioner.scheduling.ledger import Ledger
from provisioner.scheduling.packing import (
    Bin,
    Demand,
    Vector,
    affordable,
    commit,
    fill,
    fit_count,
    replicas,
    right_size,
)

__all__ = ["pack_scarce"]


def _scarce_single(i: int, demand: Demand, options: Sequence[Option], ledger: Ledger, pool: str,
                   budget: int) -> list[Bin]:
    req, n = demand.reqs[i], demand.rem[i]
    items: list[tuple[Option, int]] = []
    for o, _ in affordable(options, ledger, pool):
        f = min(fit_count(o.cpu, o.mem, o.pods, o.eph, req), n)
        if f > 0 and o.vcpus <= budget:
            items.append((o, f))
    items.sort(key=lambda t: (t[0].vcpus, -t[1], t[0].price, t[0].rank))
    front: list[tuple[Option, int]] = []
    for o, f in items:  # keep unless a kept item has fewer or equal vCPUs, more or equal pods, lower price
        if not any(k.vcpus <= o.vcpus and kf >= f and k.price <= o.price for k, kf in front):
            front.append((o, f))
    if not front:
        return []
    pods = [0] * (budget + 1)
    cost = [0.0] * (budget + 1)
    choice = [-1] * (budget + 1)
    for b in range(1, budget + 1):
        bp, bc, bch = pods[b - 1], cost[b - 1], -1
        for idx, (o, f) in enumerate(front):
            v = o.vcpus
            if v > b:
                continue
            p = pods[b - v] + f
            if p > n:
                p = n
            c = cost[b - v] + o.price
            if p > bp or (p == bp and c < bc - 1e-12):
                bp, bc, bch = p, c, idx
        pods[b], cost[b], choice[b] = bp, bc, bch
    chosen: list[int] = []
    b = budget
    while b > 0:
        idx = choice[b]
        if idx < 0:
            b -= 1
            continue
        chosen.append(idx)
        b -= front[idx][0].vcpus
    bins: list[Bin] = []
    for idx in sorted(chosen, key=lambda x: (-front[x][1], front[x][0].rank)):
        o, _ = front[idx]
        k = min(fit_count(o.cpu, o.mem, o.pods, o.eph, req), demand.rem[i])
        if k > 0 and ledger.copies(o, pool) > 0:
            commit(bins, o, ((i, k),), (req[0] * k, req[1] * k, req[2] * k, req[3] * k), 1, demand, ledger, pool)
    return bins


def _scarce_shortlist(demand: Demand, options: Sequence[Option], ledger: Ledger, pool: str,
                      size: int = 8) -> list[tuple[Option, int]]:
    """The options likely to hold the most pods per vCPU, judged on the average pod left."""
    n = max(demand.pods, 1)
    ac, am, ap, ae = (t / n for t in demand.total)
    scored = []
    for o, cap in affordable(options, ledger, pool):
        pods = o.pods / ap if ap else float(o.pods)
        for have, need in ((o.cpu, ac), (o.mem, am), (o.eph, ae)):
            if need and have / need < pods:
                pods = have / need
        scored.append((-pods / max(o.vcpus, 1), o.price, o.rank, o, cap))
    scored.sort()
    return [(o, cap) for *_, o, cap in scored[:size]]


def pack_scarce(demand: Demand, options: Sequence[Option], ledger: Ledger, pool: str) -> list[Bin]:
    """Most pods within the budgets, then the lowest price (see the module docstring)."""
    bins: list[Bin] = []
    live = [i for i in demand.order if demand.rem[i]]
    if len(live) == 1:
        for ct in ("spot", "on-demand"):
            subset = [o for o in options if o.capacity_type == ct]
            if not subset or not demand.rem[live[0]]:
                continue
            budget = ledger.vcpu_budget(ct, pool, {o.family for o in subset})
            if budget is not None:
                bins.extend(_scarce_single(live[0], demand, subset, ledger, pool, min(budget, 4096)))
    for _ in range(8):  # right-sizing can free budget: go again while that places more
        before = demand.pods
        while demand.left():
            best: tuple[float, float] | None = None
            pick: tuple[Option, tuple[tuple[int, int], ...], Vector, int] | None = None
            for shortlist in (_scarce_shortlist(demand, options, ledger, pool), affordable(options, ledger, pool)):
                for o, cap in shortlist:
                    counts, used = fill(o, demand)
                    placed = sum(k for _, k in counts)
                    if not placed:
                        continue
                    score = (placed / max(o.vcpus, 1), -o.price / placed)
                    if best is None or score > best:
                        best, pick = score, (o, counts, used, cap)
                if pick is not None:
                    break
            if pick is None:
                break
            o, counts, used, cap = pick
            commit(bins, o, counts, used, min(replicas(counts, demand.rem), cap), demand, ledger, pool)
        right_size(bins, options, ledger, pool)
        if not demand.pods or demand.pods == before:
            break
    return bins
