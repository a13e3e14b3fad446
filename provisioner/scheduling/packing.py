"""Bin-packing of pod equivalence classes onto node options, by count arithmetic.

A ``Demand`` is a list of classes, each a request vector (millicores, bytes, pod slots,
ephemeral bytes) and a count of identical pods still to place. Packing never loops over
pods: how many pods of a class fit in what is left of a node is a division, and once a
node is filled with a *pattern* (k1 pods of class 1, k2 of class 2, ...) the pattern is
repeated as many times as the remaining counts and the budgets allow, at once.

Three strategies:

- ``pack_cheapest``: the cheapest mix. One class alone is solved exactly for the tail: the
  bulk goes to the size with the lowest price per pod, the last ``max-fit`` pods to an
  exact covering table over pod counts. Several classes: each round picks the size with
  the lowest price for the remaining demand (fractional node count when at least one node
  is needed, else its own price), fills one node first-fit-decreasing, repeats the pattern.
  Then ``right_size`` moves every pattern to the cheapest size that still holds it.
- ``pack_scarce``: when budgets cannot hold everything, most pods within the budget first,
  then the lowest price: an exact knapsack over vCPUs for one class, greedy pods-per-vCPU
  for several.
- ``pack_karpenter``: Karpenter's way: fill a node while *some* size can still hold it
  (first-fit decreasing), then take the cheapest size that fits the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from provisioner.scheduling.candidates import Option
from provisioner.scheduling.ledger import Ledger

__all__ = ["Bin", "Demand", "pack_cheapest", "pack_karpenter", "pack_scarce", "right_size"]

Vector = tuple[int, int, int, int]


@dataclass(slots=True)
class Demand:
    reqs: list[Vector]
    rem: list[int]
    order: list[int]  # class indices, most demanding first

    def left(self) -> int:
        return sum(self.rem)

    def copy(self) -> Demand:
        return Demand(self.reqs, list(self.rem), self.order)


@dataclass(slots=True)
class Bin:
    option: Option
    counts: tuple[tuple[int, int], ...]  # (class index, pods of it per node)
    used: Vector
    copies: int

    @property
    def pods(self) -> int:
        return sum(k for _, k in self.counts) * self.copies


def _fit(c: int, m: int, p: int, e: int, req: Vector) -> int:
    rc, rm, rp, re_ = req
    k = p // rp if rp else 1 << 40
    if rc and c // rc < k:
        k = c // rc
    if rm and m // rm < k:
        k = m // rm
    if re_ and e // re_ < k:
        k = e // re_
    return k if k > 0 else 0


def fill(option: Option, demand: Demand) -> tuple[tuple[tuple[int, int], ...], Vector]:
    """First-fit-decreasing fill of one fresh node of ``option`` with the remaining demand."""
    c, m, p, e = option.cpu, option.mem, option.pods, option.eph
    counts: list[tuple[int, int]] = []
    rem, reqs = demand.rem, demand.reqs
    misses = 0
    for i in demand.order:
        n = rem[i]
        if not n:
            continue
        req = reqs[i]
        k = _fit(c, m, p, e, req)
        if k > n:
            k = n
        if not k:
            misses += 1
            if misses > 64 or p <= 0:
                break
            continue
        counts.append((i, k))
        c -= k * req[0]
        m -= k * req[1]
        p -= k * req[2]
        e -= k * req[3]
        if p <= 0:
            break
    used = (option.cpu - c, option.mem - m, option.pods - p, option.eph - e)
    return tuple(counts), used


def _replicas(counts: Sequence[tuple[int, int]], rem: Sequence[int]) -> int:
    return min(rem[i] // k for i, k in counts)


def _commit(bins: list[Bin], option: Option, counts: tuple[tuple[int, int], ...], used: Vector, copies: int,
            demand: Demand, ledger: Ledger, pool: str) -> None:
    for i, k in counts:
        demand.rem[i] -= k * copies
    ledger.take(option, pool, copies)
    bins.append(Bin(option, counts, used, copies))


def _affordable(options: Sequence[Option], ledger: Ledger, pool: str) -> list[tuple[Option, int]]:
    out = []
    for o in options:
        n = ledger.copies(o, pool)
        if n > 0:
            out.append((o, n))
    return out


def _pack_single(i: int, demand: Demand, options: Sequence[Option], ledger: Ledger, pool: str) -> list[Bin]:
    """One class: bulk on the best price-per-pod size, exact covering table for the tail."""
    req, n = demand.reqs[i], demand.rem[i]
    cand: list[tuple[Option, int]] = []
    for o, _ in _affordable(options, ledger, pool):
        f = _fit(o.cpu, o.mem, o.pods, o.eph, req)
        if f > 0:
            cand.append((o, f))
    if not cand:
        return []
    cand.sort(key=lambda t: (t[0].price, -t[1], t[0].rank))
    front: list[tuple[Option, int]] = []
    best_fit = 0
    for o, f in cand:
        if f > best_fit:
            front.append((o, f))
            best_fit = f
    bulk_option, bulk_fit = min(front, key=lambda t: (t[0].price / t[1], -t[1], t[0].rank))
    bins: list[Bin] = []
    bulk = max(0, (n - best_fit) // bulk_fit)
    bulk = min(bulk, ledger.copies(bulk_option, pool))
    if bulk:
        used = tuple(x * bulk_fit for x in req)
        _commit(bins, bulk_option, ((i, bulk_fit),), (used[0], used[1], used[2], used[3]), bulk, demand, ledger, pool)
    r = demand.rem[i]
    if r <= 0:
        return bins
    cost = [0.0] * (r + 1)
    choice = [0] * (r + 1)
    for j in range(1, r + 1):
        best, pick = float("inf"), 0
        for idx, (o, f) in enumerate(front):
            c = o.price + cost[j - f if j > f else 0]
            if c < best - 1e-12:
                best, pick = c, idx
        cost[j], choice[j] = best, pick
    chosen: dict[tuple[int, int], int] = {}
    j = r
    while j > 0:
        idx = choice[j]
        k = min(front[idx][1], j)
        chosen[(idx, k)] = chosen.get((idx, k), 0) + 1
        j -= k
    for (idx, k), count in sorted(chosen.items(), key=lambda t: (-t[0][1], t[0][0])):
        o = front[idx][0]
        copies = min(count, ledger.copies(o, pool), demand.rem[i] // k)
        if copies > 0:
            _commit(bins, o, ((i, k),), (req[0] * k, req[1] * k, req[2] * k, req[3] * k), copies, demand, ledger, pool)
    return bins


def pack_cheapest(demand: Demand, options: Sequence[Option], ledger: Ledger, pool: str) -> list[Bin]:
    """The cheapest mix of sizes for the demand, within the ledger (see the module docstring)."""
    bins: list[Bin] = []
    live = [i for i in demand.order if demand.rem[i]]
    if len(live) == 1:
        bins.extend(_pack_single(live[0], demand, options, ledger, pool))
    dead: set[int] = set()
    while True:
        reqs, rem = demand.reqs, demand.rem
        dc = dm = dp = de = 0
        for i in demand.order:
            n = rem[i]
            if n:
                r = reqs[i]
                dc += n * r[0]
                dm += n * r[1]
                dp += n * r[2]
                de += n * r[3]
        if not dp:
            break
        best: Option | None = None
        best_score = float("inf")
        best_cap = 0
        for o in options:
            if o.rank in dead:
                continue
            cap = ledger.copies(o, pool)
            if cap <= 0:
                continue
            est = dp / o.pods
            x = dc / o.cpu if o.cpu else (float("inf") if dc else 0.0)
            if x > est:
                est = x
            x = dm / o.mem if o.mem else (float("inf") if dm else 0.0)
            if x > est:
                est = x
            x = de / o.eph if o.eph else (float("inf") if de else 0.0)
            if x > est:
                est = x
            score = o.price * est if est >= 1.0 else o.price
            if score < best_score:
                best, best_score, best_cap = o, score, cap
        if best is None:
            break
        counts, used = fill(best, demand)
        if not counts:
            dead.add(best.rank)
            continue
        copies = min(_replicas(counts, demand.rem), best_cap)
        _commit(bins, best, counts, used, copies, demand, ledger, pool)
    right_size(bins, options, ledger, pool)
    return bins


def right_size(bins: list[Bin], options: Sequence[Option], ledger: Ledger, pool: str) -> None:
    """Move each pattern to the cheapest option that holds it, where the ledger allows."""
    for b in bins:
        c, m, p, e = b.used
        for o in options:
            if o.price >= b.option.price:
                break
            if c <= o.cpu and m <= o.mem and p <= o.pods and e <= o.eph:
                ledger.give(b.option, pool, b.copies)
                if ledger.copies(o, pool) >= b.copies:
                    ledger.take(o, pool, b.copies)
                    b.option = o
                    break
                ledger.take(b.option, pool, b.copies)


def _scarce_single(i: int, demand: Demand, options: Sequence[Option], ledger: Ledger, pool: str,
                   budget: int) -> list[Bin]:
    req, n = demand.reqs[i], demand.rem[i]
    items: list[tuple[Option, int]] = []
    for o, _ in _affordable(options, ledger, pool):
        f = min(_fit(o.cpu, o.mem, o.pods, o.eph, req), n)
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
        k = min(_fit(o.cpu, o.mem, o.pods, o.eph, req), demand.rem[i])
        if k > 0 and ledger.copies(o, pool) > 0:
            _commit(bins, o, ((i, k),), (req[0] * k, req[1] * k, req[2] * k, req[3] * k), 1, demand, ledger, pool)
    return bins


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
    while demand.left():
        best: tuple[float, float] | None = None
        pick: tuple[Option, tuple[tuple[int, int], ...], Vector, int] | None = None
        for o, cap in _affordable(options, ledger, pool):
            counts, used = fill(o, demand)
            placed = sum(k for _, k in counts)
            if not placed:
                continue
            score = (placed / max(o.vcpus, 1), -o.price / placed)
            if best is None or score > best:
                best, pick = score, (o, counts, used, cap)
        if pick is None:
            break
        o, counts, used, cap = pick
        _commit(bins, o, counts, used, min(_replicas(counts, demand.rem), cap), demand, ledger, pool)
    right_size(bins, options, ledger, pool)
    return bins


def pack_karpenter(demand: Demand, frontier: Sequence[Option], options: Sequence[Option], ledger: Ledger,
                   pool: str) -> list[Bin]:
    """Karpenter's choice: grow each node while some size holds it, then its cheapest fitting size."""
    bins: list[Bin] = []
    while demand.left():
        sizes = [o for o in frontier if ledger.copies(o, pool) > 0]
        if not sizes:
            break
        c = m = p = e = 0
        counts: list[tuple[int, int]] = []
        for i in demand.order:
            n = demand.rem[i]
            if not n:
                continue
            req = demand.reqs[i]
            best = 0
            for o in sizes:
                k = _fit(o.cpu - c, o.mem - m, o.pods - p, o.eph - e, req)
                if k > best:
                    best = k
                    if best >= n:
                        break
            k = min(best, n)
            if not k:
                continue
            counts.append((i, k))
            c, m, p, e = c + k * req[0], m + k * req[1], p + k * req[2], e + k * req[3]
            sizes = [o for o in sizes if o.fits(c, m, p, e)]
        if not counts:
            break
        chosen = next((o for o in options if o.fits(c, m, p, e) and ledger.copies(o, pool) > 0), None)
        if chosen is None:
            break
        copies = min(_replicas(counts, demand.rem), ledger.copies(chosen, pool))
        _commit(bins, chosen, tuple(counts), (c, m, p, e), copies, demand, ledger, pool)
    return bins
