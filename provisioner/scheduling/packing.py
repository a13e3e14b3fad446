"""Bin-packing of pod equivalence classes onto node options, by count arithmetic.

A ``Demand`` is a list of classes, each a request vector (millicores, bytes, pod slots,
ephemeral bytes) and a count of identical pods still to place. Packing never loops over
pods: how many pods of a class fit in what is left of a node is a division, and once a
node is filled with a *pattern* (k1 pods of class 1, k2 of class 2, ...) the pattern is
repeated as many times as the remaining counts and the budgets allow, at once.

Strategies:

- ``pack_cheapest``: the cheapest mix. One class alone is solved exactly: the bulk goes to
  the size with the lowest price per pod and the tail to an exact covering table over pod
  counts. Several classes: a few bulk sizes are tried (each judged on a real fill of one
  node); each try uses its bulk size while the demand fills whole nodes of it, then for the
  tail the size with the lowest price for what is left; ``right_size`` then moves every
  pattern to the cheapest size that still holds it. The try placing the most pods, then
  costing least, is kept.
- ``pack_karpenter``: Karpenter's way: fill a node while *some* size can still hold it
  (first-fit decreasing), then take the cheapest size that fits the result.
- ``scarcity.pack_scarce``: when budgets cannot hold every pod.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from provisioner.scheduling.candidates import Option
from provisioner.scheduling.ledger import Ledger

__all__ = [
    "Bin",
    "Demand",
    "affordable",
    "commit",
    "fill",
    "fit_count",
    "pack_cheapest",
    "pack_karpenter",
    "replicas",
    "right_size",
]

Vector = tuple[int, int, int, int]


class Demand:
    """Classes still to place: request vectors, counts left, and running totals.

    ``order`` lists the classes with pods left, most demanding first; it is compacted as
    classes run out, so scans stay proportional to what is left.
    """

    __slots__ = ("dead", "order", "pods", "rem", "reqs", "total")

    def __init__(self, reqs: list[Vector], rem: list[int]) -> None:
        self.reqs = reqs
        self.rem = list(rem)
        self.order = [i for i, n in enumerate(self.rem) if n > 0]
        self.dead = 0
        tc = tm = tp = te = 0
        for i in self.order:
            n, r = self.rem[i], reqs[i]
            tc += n * r[0]
            tm += n * r[1]
            tp += n * r[2]
            te += n * r[3]
        self.total = [tc, tm, tp, te]
        self.pods = sum(self.rem)

    def left(self) -> int:
        return self.pods

    def copy(self) -> Demand:
        other = Demand.__new__(Demand)
        other.reqs, other.rem, other.order = self.reqs, list(self.rem), list(self.order)
        other.dead, other.total, other.pods = self.dead, list(self.total), self.pods
        return other

    def adopt(self, other: Demand) -> None:
        """Take over another copy's state (the packing that was kept)."""
        self.rem, self.order, self.dead, self.total, self.pods = other.rem, other.order, other.dead, other.total, other.pods

    def consume(self, counts: Sequence[tuple[int, int]], copies: int) -> None:
        rem, reqs, total = self.rem, self.reqs, self.total
        for i, k in counts:
            n = k * copies
            rem[i] -= n
            r = reqs[i]
            total[0] -= n * r[0]
            total[1] -= n * r[1]
            total[2] -= n * r[2]
            total[3] -= n * r[3]
            self.pods -= n
            if not rem[i]:
                self.dead += 1
        if self.dead > 16 and self.dead * 8 > len(self.order):
            self.order = [i for i in self.order if rem[i]]
            self.dead = 0


@dataclass(slots=True)
class Bin:
    option: Option
    counts: tuple[tuple[int, int], ...]  # (class index, pods of it per node)
    used: Vector
    copies: int

    @property
    def pods(self) -> int:
        return sum(k for _, k in self.counts) * self.copies


def fit_count(c: int, m: int, p: int, e: int, req: Vector) -> int:
    """How many pods requesting ``req`` fit in free room (c, m, p, e): a division per resource."""
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
        rc, rm, rp, re_ = req
        k = p // rp if rp else n
        if k > n:
            k = n
        if rc and c // rc < k:
            k = c // rc
        if rm and m // rm < k:
            k = m // rm
        if re_ and e // re_ < k:
            k = e // re_
        if k <= 0:
            misses += 1
            if misses > 64 or p <= 0:
                break
            continue
        counts.append((i, k))
        c -= k * rc
        m -= k * rm
        p -= k * rp
        e -= k * re_
        if p <= 0:
            break
    used = (option.cpu - c, option.mem - m, option.pods - p, option.eph - e)
    return tuple(counts), used


def replicas(counts: Sequence[tuple[int, int]], rem: Sequence[int]) -> int:
    return min(rem[i] // k for i, k in counts)


def commit(bins: list[Bin], option: Option, counts: tuple[tuple[int, int], ...], used: Vector, copies: int,
            demand: Demand, ledger: Ledger, pool: str) -> None:
    demand.consume(counts, copies)
    ledger.take(option, pool, copies)
    bins.append(Bin(option, counts, used, copies))


def affordable(options: Sequence[Option], ledger: Ledger, pool: str) -> list[tuple[Option, int]]:
    out = []
    for o in options:
        n = ledger.copies(o, pool)
        if n > 0:
            out.append((o, n))
    return out


_TABLE_CAP = 1500  # pods covered by the exact tail table of one class


def _pack_single(i: int, demand: Demand, options: Sequence[Option], ledger: Ledger, pool: str) -> list[Bin]:
    """One class: bulk on the best price-per-pod size, exact covering table for the tail."""
    req, n = demand.reqs[i], demand.rem[i]
    cand: list[tuple[Option, int]] = []
    for o, _ in affordable(options, ledger, pool):
        f = fit_count(o.cpu, o.mem, o.pods, o.eph, req)
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
    # An optimal plan uses fewer than ``bulk_fit`` nodes of other sizes (any ``bulk_fit`` of them hold a
    # subset whose pod count divides by ``bulk_fit``, which the bulk size holds as cheaply), so an exact
    # table over the last ``bulk_fit * best_fit`` pods is exact overall; it is capped for speed.
    window = min(n, max(min(bulk_fit * best_fit, _TABLE_CAP), best_fit + bulk_fit))
    bulk = max(0, (n - window) // bulk_fit)
    bulk = min(bulk, ledger.copies(bulk_option, pool))
    if bulk:
        used = tuple(x * bulk_fit for x in req)
        commit(bins, bulk_option, ((i, bulk_fit),), (used[0], used[1], used[2], used[3]), bulk, demand, ledger, pool)
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
            commit(bins, o, ((i, k),), (req[0] * k, req[1] * k, req[2] * k, req[3] * k), copies, demand, ledger, pool)
    return bins


def _nodes_needed(o: Option, dc: int, dm: int, dp: int, de: int) -> float:
    """Nodes of ``o`` the remaining demand needs if resources were divisible."""
    est = dp / o.pods if o.pods else float("inf")
    for need, have in ((dc, o.cpu), (dm, o.mem), (de, o.eph)):
        if need:
            x = need / have if have else float("inf")
            if x > est:
                est = x
    return est


def _pack_with(demand: Demand, options: Sequence[Option], ledger: Ledger, pool: str, bulk: Option | None) -> list[Bin]:
    """Round after round: fill one node of the best option, repeat the pattern, until done.

    The best option is ``bulk`` while the demand still fills at least one node of it, else the
    lowest price for the remaining demand (fractional nodes, or its own price under one node).
    """
    bins: list[Bin] = []
    dead: set[int] = set()
    for _ in range(8):  # right-sizing can free budget: go again while that places more
        before = demand.pods
        while demand.pods:
            dc, dm, dp, de = demand.total
            best: Option | None = None
            best_cap = 0
            if bulk is not None and bulk.rank not in dead and _nodes_needed(bulk, dc, dm, dp, de) >= 1.0:
                best_cap = ledger.copies(bulk, pool)
                if best_cap > 0:
                    best = bulk
            if best is None:
                best_score = float("inf")
                for o in options:
                    if o.rank in dead:
                        continue
                    cap = ledger.copies(o, pool)
                    if cap <= 0:
                        continue
                    est = _nodes_needed(o, dc, dm, dp, de)
                    score = o.price * est if est >= 1.0 else o.price
                    if score < best_score:
                        best, best_score, best_cap = o, score, cap
            if best is None:
                break
            counts, used = fill(best, demand)
            if not counts:
                dead.add(best.rank)
                continue
            copies = min(replicas(counts, demand.rem), best_cap)
            commit(bins, best, counts, used, copies, demand, ledger, pool)
        right_size(bins, options, ledger, pool)
        if not demand.pods or demand.pods == before:
            break
    return bins


def _bulk_candidates(demand: Demand, options: Sequence[Option], ledger: Ledger, pool: str, count: int) -> list[Option]:
    """The options most worth trying as the bulk size: best price per node-worth of the demand,
    judged on a real first-fit-decreasing fill of one node (so lumpy pods count as they pack)."""
    dc, dm, dp, de = demand.total
    rough = sorted(
        (o.price * max(_nodes_needed(o, dc, dm, dp, de), 1.0), o.rank, o)
        for o in options if ledger.copies(o, pool) > 0
    )
    scored: list[tuple[float, int, Option]] = []
    for _, rank, o in rough[: 3 * count]:
        counts, used = fill(o, demand)
        if not counts:
            continue
        nodes = max((need / got for need, got in zip(demand.total, used, strict=True) if need and got), default=1.0)
        scored.append((o.price * max(nodes, 1.0), rank, o))
    scored.sort()
    return [o for _, _, o in scored[:count]]


def pack_cheapest(demand: Demand, options: Sequence[Option], ledger: Ledger, pool: str) -> list[Bin]:
    """The cheapest mix of sizes for the demand, within the ledger (see the module docstring).

    Several classes: a few bulk sizes are tried (each a whole packing on copies of the demand
    and ledger) and the plan placing the most pods, then the cheapest, is kept. Fewer tries
    when there are many classes, to keep planning time proportional to them.
    """
    live = [i for i in demand.order if demand.rem[i]]
    if len(live) == 1:
        bins = _pack_single(live[0], demand, options, ledger, pool)
        bins.extend(_pack_with(demand, options, ledger, pool, None))
        return bins
    tries = 3 if len(live) <= 200 else 1
    best: tuple[int, float, list[Bin], Demand, Ledger] | None = None
    for bulk in [*_bulk_candidates(demand, options, ledger, pool, tries), None][: max(tries, 1) + (tries > 1)]:
        d, led = demand.copy(), ledger.copy()
        bins = _pack_with(d, options, led, pool, bulk)
        placed = demand.pods - d.pods
        cost = sum(b.option.price * b.copies for b in bins)
        if best is None or placed > best[0] or (placed == best[0] and cost < best[1] - 1e-9):
            best = (placed, cost, bins, d, led)
    if best is None:
        return []
    demand.adopt(best[3])
    ledger.adopt(best[4])
    return best[2]


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
        misses = 0
        for i in demand.order:
            n = demand.rem[i]
            if not n:
                continue
            req = demand.reqs[i]
            best = 0
            for o in sizes:
                k = fit_count(o.cpu - c, o.mem - m, o.pods - p, o.eph - e, req)
                if k > best:
                    best = k
                    if best >= n:
                        break
            k = min(best, n)
            if not k:
                misses += 1
                if misses > 64:  # the node is as good as full: stop scanning smaller classes
                    break
                continue
            counts.append((i, k))
            c, m, p, e = c + k * req[0], m + k * req[1], p + k * req[2], e + k * req[3]
            sizes = [o for o in sizes if o.fits(c, m, p, e)]
        if not counts:
            break
        chosen = next((o for o in options if o.fits(c, m, p, e) and ledger.copies(o, pool) > 0), None)
        if chosen is None:
            break
        copies = min(replicas(counts, demand.rem), ledger.copies(chosen, pool))
        commit(bins, chosen, tuple(counts), (c, m, p, e), copies, demand, ledger, pool)
    return bins
