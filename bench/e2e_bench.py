"""End to end in the emulators: pods arriving over a few seconds, time to their VM create request.

For every pod: the moment a poller first sees it provisionable (PodScheduled=False/Unschedulable,
observed every 20 ms on the Kubernetes emulator's store) to the moment the ARM emulator receives
the VM PUT of the NodeClaim the pod was planned onto. Prints p50/p90/p99/max and the batching
floor for comparison (the idle window a batch always waits).

    .venv/bin/python bench/e2e_bench.py                      # 1,000 pods over 10 s
    .venv/bin/python bench/e2e_bench.py --pods 200 --over 2  # a quick run
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import threading
import time
from datetime import UTC, datetime

from provisioner.controller.kubeport import is_provisionable
from provisioner.model.catalog import load_catalog
from sim.scenarios import founding
from sim.scenarios.harness import Stage, StageTimings

CATALOG = load_catalog("westus2")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--over", type=float, default=10.0, help="seconds over which the pods arrive")
    parser.add_argument("--mode", default="quota-aware", choices=("quota-aware", "karpenter"))
    args = parser.parse_args()
    timings = StageTimings(vm_create=0.2, node_ready=0.2, batch_idle=1.0, batch_max=10.0, requeue=10.0,
                           quota_refresh=60.0, failed_linger=2.0, tick=0.1)
    seen: dict[str, datetime] = {}
    stop = threading.Event()
    pool = founding.nodepool()
    pool["spec"]["limits"] = {"cpu": "100000"}
    quotas = {"cores": 100_000, "standardDLSv5Family": 100_000, "standardDASv5Family": 100_000}
    with Stage(args.mode, quotas=quotas, nodepool=pool, timings=timings) as stage:

        def watch() -> None:
            while not stop.wait(0.02):
                now = datetime.now(UTC)
                for pod in stage.kube.objects("pods", "default"):
                    key = f"default/{pod['metadata']['name']}"
                    if key not in seen and is_provisionable(pod):
                        seen[key] = now

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        started = time.monotonic()
        steps = 20
        for i in range(1, steps + 1):
            stage.scale(round(args.pods * i / steps))
            time.sleep(max(0.0, started + args.over * i / steps - time.monotonic()))
        assert stage.controller is not None
        controller = stage.controller
        stage.wait_for(lambda: len(seen) >= args.pods and not controller.launcher.in_flight()
                       and stage.provisionable() == 0, timeout=60 + args.over)
        stop.set()
        watcher.join()
        creates = {r.path.rsplit("/", 1)[-1].split("?")[0]: r.at for r in stage.arm.request_log
                   if r.op == "create_vm" and r.method == "PUT"}
        latencies: list[float] = []
        for claim, pods in controller.provisioner.claim_pods.items():
            at = creates.get(f"aks-{claim}")
            if at is None:
                continue
            for pod in pods:
                first = seen.get(pod.key)
                if first is not None:
                    latencies.append((at - first).total_seconds())
        keys = [p.key for pods in controller.provisioner.claim_pods.values() for p in pods]
        vcpus = sum(CATALOG.get(r.instance_type).vcpus for r in controller.provisioner.records.values()  # type: ignore[union-attr]
                    if CATALOG.get(r.instance_type))
        print(f"claims: {len(controller.provisioner.records)}, pods in claims {len(keys)} ({len(set(keys))} distinct), "
              f"vCPUs {vcpus}")
        found = [datetime.fromisoformat(r["time"].replace("Z", "+00:00")) for r in stage.logged("pods.found")]
        created = {r["name"]: datetime.fromisoformat(r["time"].replace("Z", "+00:00"))
                   for r in stage.logged("nodeclaim.created")}
        act = [(creates[f"aks-{c}"] - t).total_seconds() for c, t in created.items() if f"aks-{c}" in creates]
        first_pass = min(found) if found else None
        passes = controller.provisioner.stats.passes
        claims = controller.provisioner.stats.claims_created
    print(f"machine: nproc {os.cpu_count()}, {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print(f"pods: {args.pods} arriving over {args.over:.0f} s; mode {args.mode}; passes {passes}; NodeClaims {claims}; "
          f"pods measured {len(latencies)}")
    if latencies:
        print(f"Unschedulable -> VM create request: p50 {statistics.median(latencies):.2f} s, "
              f"p90 {_percentile(latencies, 0.9):.2f} s, p99 {_percentile(latencies, 0.99):.2f} s, "
              f"max {max(latencies):.2f} s")
        print(f"floor: the batch idle window alone is {timings.batch_idle:.1f} s (max {timings.batch_max:.0f} s)")
    if act:
        print(f"NodeClaim created -> its VM create request (launch pool, NIC first): p50 {statistics.median(act):.3f} s, "
              f"max {max(act):.3f} s over {len(act)} claims")
    if first_pass is not None and seen:
        print(f"first pod seen -> first planning pass: {(first_pass - min(seen.values())).total_seconds():.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
