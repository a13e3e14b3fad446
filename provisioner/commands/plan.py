"""``karp-provisioner plan``: what the provisioner would create for given pods, offline.

Reads Pods and workloads (Deployments, ReplicaSets, StatefulSets: replicas expand),
DaemonSets, NodePools and AKSNodeClasses from YAML or JSON files, takes the VM-size catalog
of a region and the quota headroom from flags, runs the planner once and prints the
NodeClaims, the pods that stay pending with their reason, the hourly cost and the time
spent planning. Nothing is created and nothing is contacted.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from provisioner.model.catalog import load_catalog
from provisioner.model.errors import InputError
from provisioner.model.manifests import Manifests, from_documents
from provisioner.model.nodepool import NodePool
from provisioner.model.quantity import QuantityError, format_cpu, format_memory
from provisioner.model.quota import QuotaSnapshot, QuotaUsage
from provisioner.model.resources import Resources
from provisioner.scheduling.overhead import overhead_by_pool
from provisioner.scheduling.plan import Plan
from provisioner.scheduling.snapshot import Snapshot
from provisioner.scheduling.solver import PlanOptions, plan

__all__ = ["main"]

EPILOG = """examples:
  # the founding scenario: 10 inflate pods, the general-purpose NodePool, 6 vCPUs of quota left
  karp-provisioner plan --pods fixtures/manifests/inflate.yaml --pods fixtures/manifests/daemonsets.yaml \\
      --nodepool fixtures/manifests/nodepool.yaml --nodepool fixtures/manifests/aksnodeclass.yaml \\
      --quota cores=20 --usage cores=14

  # what Karpenter would have asked for (quota-blind), as JSON
  karp-provisioner plan --pods fixtures/manifests/inflate.yaml --nodepool fixtures/manifests/nodepool.yaml \\
      --daemonset-overhead cpu=250m,memory=481280Ki,pods=5 --quota-blind --json

  # pods from stdin, every size of the bundled eastus catalog, a VM-family quota too
  kubectl get deploy web -o yaml | karp-provisioner plan --pods - --location eastus \\
      --quota cores=100,standardDLSv5Family=8 --usage cores=40,standardDLSv5Family=0

Quota names are those of the Azure usage API: cores (regional vCPUs), lowPriorityCores
(spot vCPUs) and VM families such as standardDLSv5Family. A quota given without usage has
usage 0. Without --nodepool a NodePool "default" allowing every size (on-demand) is used.
Exit codes: 0 plan printed (even if some pods cannot be placed), 2 bad input.
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="karp-provisioner plan",
        description="Preview the NodeClaims the provisioner would create for given pods, offline: sizes, "
        "capacity type, zone, pods, hourly price, and a reason for every pod it cannot place.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--pods", action="append", required=True, metavar="FILE",
                   help="Pods, Deployments, ReplicaSets, StatefulSets, DaemonSets (YAML or JSON, '-' for stdin); repeatable")
    p.add_argument("--nodepool", action="append", default=[], metavar="FILE",
                   help="NodePools and AKSNodeClasses (YAML or JSON); repeatable")
    p.add_argument("--location", default="westus2", help="region whose bundled VM-size catalog to use (default westus2)")
    p.add_argument("--catalog", metavar="FILE", help="a catalog file instead of the bundled one")
    p.add_argument("--quota", action="append", default=[], metavar="NAME=LIMIT",
                   help="a vCPU quota limit, e.g. cores=20 (comma-separated or repeated)")
    p.add_argument("--usage", action="append", default=[], metavar="NAME=USAGE",
                   help="current usage of a quota, e.g. cores=14")
    p.add_argument("--daemonset-overhead", metavar="RESOURCES",
                   help="per-node DaemonSet overhead, e.g. cpu=250m,memory=481280Ki,pods=5 "
                   "(default: summed from DaemonSets in the --pods files)")
    p.add_argument("--quota-blind", action="store_true",
                   help="plan as Karpenter does: ignore quota, cheapest size that fits the whole batch")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    return p


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            name, sep, number = part.partition("=")
            if not sep or not name.strip() or not number.strip():
                raise InputError(f"{flag} {part!r}: expected NAME=VALUE")
            out[name.strip()] = number.strip()
    return out


def _quota(args: argparse.Namespace, region: str) -> QuotaSnapshot | None:
    limits = _pairs(args.quota, "--quota")
    usages = _pairs(args.usage, "--usage")
    if not limits and not usages:
        return None
    items: dict[str, QuotaUsage] = {}
    for name in usages:
        if name not in limits:
            raise InputError(f"--usage {name}: no --quota {name}=LIMIT given")
    for name, raw in limits.items():
        try:
            limit = int(raw)
            usage = int(usages.get(name, "0"))
        except ValueError:
            raise InputError(f"--quota/--usage {name}: expected whole vCPU counts, got {raw!r}"
                             f"{' / ' + repr(usages[name]) if name in usages else ''}") from None
        if limit < 0 or usage < 0:
            raise InputError(f"--quota/--usage {name}: negative value")
        items[name] = QuotaUsage(name, limit, usage)
    return QuotaSnapshot(region, datetime.now(UTC), "flags", items)


def _overhead(text: str) -> Resources:
    try:
        return Resources.from_requests(_pairs([text], "--daemonset-overhead"))
    except QuantityError as e:
        raise InputError(f"--daemonset-overhead: {e}") from None


def _documents(path: str) -> Iterator[tuple[str, Any]]:
    name = "stdin" if path == "-" else path
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{name}: cannot read it ({e})") from None
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"{name}: not valid JSON ({e.msg} at line {e.lineno})") from None
        items = doc if isinstance(doc, list) else [doc]
        for i, item in enumerate(items):
            yield f"{name} document {i + 1}", item
        return
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e)
        raise InputError(f"{name}: not valid YAML ({problem}{where})") from None
    for i, doc in enumerate(docs):
        if doc is not None:
            yield f"{name} document {i + 1}", doc


def _read(paths: list[str]) -> Manifests:
    docs: list[tuple[str, Any]] = []
    for path in paths:
        docs.extend(_documents(path))
    return from_documents(docs)


DEFAULT_POOL = NodePool("default")


def _snapshot(args: argparse.Namespace) -> Snapshot:
    catalog = load_catalog(args.location, args.catalog)
    workload = _read(args.pods)
    pools_from = _read(args.nodepool) if args.nodepool else Manifests()
    pools = pools_from.nodepools + workload.nodepools or (DEFAULT_POOL,)
    names = [p.name for p in pools]
    if len(set(names)) != len(names):
        raise InputError(f"--nodepool: NodePool names repeat: {', '.join(sorted(names))}")
    if args.daemonset_overhead:
        fixed = _overhead(args.daemonset_overhead)
        overhead = {p.name: fixed for p in pools}
    else:
        overhead = overhead_by_pool(workload.daemonsets, pools)
    classes = {c.name: c for c in pools_from.node_classes + workload.node_classes}
    return Snapshot(
        pods=workload.pods,
        nodepools=tuple(pools),
        catalog=catalog,
        nodes=workload.nodes,
        quota=_quota(args, catalog.region),
        daemonset_overhead=overhead,
        node_classes=classes,
        now=datetime.now(UTC),
    )


def _short(items: list[str], limit: int = 6) -> str:
    if len(items) <= limit:
        return ", ".join(items)
    return f"{', '.join(items[:limit])} and {len(items) - limit} other(s)"


def _text(result: Plan, snap: Snapshot, elapsed_ms: float) -> str:
    lines: list[str] = []
    pending = sum(1 for p in snap.pods if p.is_provisionable)
    mode = "quota-aware" if result.quota_aware else "quota-blind (as Karpenter)"
    quotas = snap.quotas()
    headroom = ", ".join(f"{q.name} {q.left} of {q.limit} left" for q in quotas.values())
    lines.append(f"Plan for {pending} pending pods in {snap.catalog.region}, {mode}"
                 f"{'; quota ' + headroom if headroom else ''}")
    if result.nodeclaims:
        lines.append(f"\nNodeClaims to create ({len(result.nodeclaims)}):")
        header = ("NAME", "NODEPOOL", "SIZE", "CAPACITY", "ZONE", "VCPUS", "PODS", "$/HOUR")
        rows = [header] + [
            (c.name, c.nodepool, c.instance_type, c.capacity_type, c.zone or "any", str(c.vcpus), str(len(c.pods)),
             f"{c.price_per_hour:.4f}")
            for c in result.nodeclaims
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        for row in rows:
            lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
        for c in result.nodeclaims:
            req = c.requests
            lines.append(f"  {c.name}: requests cpu {format_cpu(req.cpu_m)}, memory {format_memory(req.memory)}, "
                         f"pods {req.pods}; {len(c.options)} size option(s): {_short([o.name for o in c.options], 3)}")
            lines.append(f"    pods: {_short(list(c.pods))}")
    if result.placements:
        lines.append(f"\nPods that fit on existing nodes or in-flight NodeClaims ({len(result.placements)}):")
        by_target: dict[str, list[str]] = {}
        for pl in result.placements:
            by_target.setdefault(f"{pl.kind}/{pl.target}", []).append(pl.pod)
        for target, pods in by_target.items():
            lines.append(f"  {target}: {_short(pods)}")
    if result.unplaced:
        lines.append(f"\nPods that stay pending ({len(result.unplaced)}):")
        by_reason: dict[tuple[str, str], list[str]] = {}
        for u in result.unplaced:
            by_reason.setdefault((str(u.reason.code), u.reason.message), []).append(u.pod)
        for (code, message), pods in by_reason.items():
            lines.append(f"  [{code}] {message}")
            lines.append(f"    {len(pods)} pod(s): {_short(pods)}")
    lines.append(f"\nTotal: ${result.cost_per_hour:.4f}/hour for {len(result.nodeclaims)} new node(s); "
                 f"{result.pods_placed} of {pending} pods placed; planned in {elapsed_ms:.2f} ms")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        snap = _snapshot(args)
    except InputError as e:
        print(f"karp-provisioner plan: {e}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    result = plan(snap, PlanOptions(quota_aware=not args.quota_blind))
    elapsed_ms = (time.perf_counter() - started) * 1000
    if args.json:
        out = result.to_dict()
        out["elapsed_ms"] = round(elapsed_ms, 3)
        out["location"] = snap.catalog.region
        print(json.dumps(out, indent=2))
    else:
        print(_text(result, snap, elapsed_ms))
    return 0
