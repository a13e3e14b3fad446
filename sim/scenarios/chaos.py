"""``karp-sim chaos``: the provisioner under faults, crashes and fail-overs, then the books are checked.

Seeded and bounded. Both emulators run in this process; two provisioner replicas
(``provisioner.controller.service.Service``: leader election on a Lease, the controller,
upkeep) talk to them through the real Kubernetes and Azure SDK clients.

What happens, driven by one ``random.Random(seed)``:

- the ARM emulator answers a share of calls with throttling (429 + Retry-After), 500s,
  dropped connections and slow answers, and fails a few VM creates asynchronously
  (AllocationFailed, ZonalAllocationFailed);
- the Kubernetes emulator fails some requests with 500, slows some down, expires and cuts
  watches (a lost watch);
- ``inflate`` is scaled up in steps past what the regional vCPU quota allows, over two
  NodePools (a preferred one with a small cpu limit, and an overflow one); half-way,
  another workload takes some of the quota, so the provisioner's cached usage is stale;
- the leader is killed several times in the middle of a launch (a crash: no Lease
  release, no waiting), the standby takes over (a fail-over), and the killed replica is
  started again (a restart).

Then the faults stop, the system settles, and the books are checked:

============================  ======================================================
figure                        meaning (all must hold for exit code 0)
============================  ======================================================
leaked_vms / leaked_nics      VMs / NICs with no NodeClaim left at the end: 0
duplicate_vms                 claims for which a second VM was ever created: 0
limit_breaches                samples where a NodePool's VMs exceeded its cpu limit: 0
max_refusals_per_scope_per_ttl  most quota refusals of one quota within its cache TTL: ≤ 1
pods_fitting_quota            inflate pods the quota (and limits) can hold
pods_running                  inflate pods Running at the end: = pods_fitting_quota
============================  ======================================================
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import random
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from provisioner.azure.credentials import StaticCredential
from provisioner.controller.launch import TAG_CLUSTER, TAG_NODEPOOL
from provisioner.controller.manager import ControllerOptions
from provisioner.controller.service import Service, ServiceOptions
from provisioner.controller.unavailable import TTL
from provisioner.controller.upkeep import UpkeepOptions
from provisioner.model.allocatable import pods_that_fit
from provisioner.model.catalog import load_catalog
from provisioner.model.resources import Resources
from provisioner.observability.logwriter import LogWriter
from sim.arm.emulator import ArmEmulator
from sim.arm.faults import FaultPlan, FaultRule
from sim.arm.state import Timings
from sim.kube.emulator import KubeEmulator
from sim.scenarios import founding

__all__ = ["ChaosConfig", "main", "run_chaos"]

CLUSTER = "karpenter"
SIZE = "Standard_D4s_v5"
KEYS = ("seed", "duration_s", "launches", "faults_injected", "restarts", "failovers", "leaked_vms", "leaked_nics",
        "duplicate_vms", "limit_breaches", "max_refusals_per_scope_per_ttl", "pods_fitting_quota", "pods_running")


@dataclass(frozen=True, slots=True)
class ChaosConfig:
    seed: int = 1
    duration: float = 60.0  # seconds of chaos (faults, kills, scaling), before settling
    kills: int = 3
    quota_cores: int = 24
    external_cores: int = 4  # vCPUs another workload takes half-way through (the cached quota goes stale)
    pool_cpu_limit: int = 8  # the preferred NodePool's limit; the overflow pool takes the rest
    replicas_target: int = 18
    settle_timeout: float = 45.0


def _nodepool(name: str, cpu_limit: int, weight: int) -> dict[str, Any]:
    pool = founding.nodepool()
    pool["metadata"]["name"] = name
    spec = pool["spec"]
    spec["template"]["spec"]["requirements"].append(
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [SIZE]})
    spec["limits"] = {"cpu": str(cpu_limit)}
    spec["weight"] = weight
    spec["disruption"] = {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "15s"}
    return pool


POOLS = ("general-purpose", "overflow")
OVERFLOW_LIMIT = 1000


def _arm_faults(seed: int) -> FaultPlan:
    return FaultPlan([
        FaultRule("allocation_failed", op="create_vm", zone="1", count=1),
        FaultRule("zonal_allocation_failed", op="create_vm", zone="2", count=1),
        FaultRule("throttle", op="*", rate=0.03, retry_after=1),
        FaultRule("server_error", op="*", rate=0.03),
        FaultRule("drop", op="*", rate=0.02),
        FaultRule("slow", op="*", rate=0.05, delay_s=0.4),
    ], seed=seed)


class _Books:
    """What is watched while the chaos runs: each NodePool's cpu limit against the VMs that exist."""

    def __init__(self, arm: ArmEmulator, limits_m: dict[str, int]) -> None:
        self.arm = arm
        self.limits_m = limits_m
        self.breaches = 0
        self.samples = 0
        self._vcpus = {it.name.lower(): it.millicores for it in load_catalog(founding.REGION).types}

    def sample(self) -> None:
        used: dict[str, int] = {}
        for vm in self.arm.vms.values():
            if vm.state in ("Creating", "Succeeded", "Updating"):
                pool = vm.tags.get(TAG_NODEPOOL, "")
                used[pool] = used.get(pool, 0) + self._vcpus.get(vm.size.lower(), 0)
        self.samples += 1
        self.breaches += sum(1 for pool, limit in self.limits_m.items() if used.get(pool, 0) > limit)


class Chaos:
    def __init__(self, config: ChaosConfig, emit: Callable[[str], None], log_path: str = "") -> None:
        self.config = config
        self.emit = emit
        self.rng = random.Random(config.seed)
        self.kube = KubeEmulator(region=founding.REGION, node_ready_delay=0.3, node_gone_delay=0.3, tick=0.05)
        founding.seed_cluster(self.kube, _nodepool(POOLS[0], config.pool_cpu_limit, 50))
        self.kube.create("nodepools", _nodepool(POOLS[1], OVERFLOW_LIMIT, 10))
        self.bridge = founding.NodeBridge(self.kube)
        self.arm = ArmEmulator(founding.REGION, quotas={"cores": config.quota_cores}, usages={"cores": 0},
                               faults=_arm_faults(config.seed), vm_created_hook=self.bridge.created,
                               vm_deleted_hook=self.bridge.deleted,
                               timings=Timings(vm_create_s=0.8, vm_delete_s=0.05, nic_s=0.02))
        self.log = LogWriter(path=log_path, level="DEBUG")
        self.records: list[dict[str, Any]] = []
        self.log.subscribe(self.records.append)
        self.services: list[Service] = []
        self.kube_faults = 0
        self.restarts = 0
        self.failovers = 0
        self.takeovers: list[float] = []
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._serial = 0
        self.catalog = load_catalog(founding.REGION).types
        self.books: _Books | None = None

    # --- the system -----------------------------------------------------------------------
    def start(self) -> None:
        self.kube.start()
        endpoint = self.arm.start()
        self.subnet = endpoint.subnet_id
        self.books = _Books(self.arm, {POOLS[0]: self.config.pool_cpu_limit * 1000, POOLS[1]: OVERFLOW_LIMIT * 1000})
        for target, name in ((self._watch_books, "chaos-books"),):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        self.services = [self.replica(), self.replica()]

    def replica(self) -> Service:
        from provisioner.azure.compute import AzureCompute
        from provisioner.azure.config import AzureConfig

        self._serial += 1
        credential = StaticCredential("karp-chaos")
        compute = AzureCompute(AzureConfig.for_emulator(self.arm.endpoint.as_dict(), credential, max_retries=2,
                                                        retry_backoff=0.05, max_retry_after=2.0, timeout=5.0))
        controller = ControllerOptions(cluster=CLUSTER, subnet_id=self.subnet, mode="quota-aware", batch_idle=0.3,
                                       batch_max=2.0, quota_refresh=5.0, requeue=1.5, tick=0.1, failed_linger=0.5)
        upkeep = UpkeepOptions(cluster=CLUSTER, launch_timeout=20.0, registration_timeout=30.0, gc_interval=1.0,
                               gc_grace=3.0, recovery_interval=0.5, recovery_grace=3.0, liveness_interval=1.0,
                               disruption_interval=2.0, tick=0.2)
        options = ServiceOptions(upkeep=upkeep, identity=f"karp-{self._serial}", lease_duration=2.0,
                                 renew_deadline=1.5, retry_period=0.25, metrics_port=None, health_port=None,
                                 shutdown_grace=5.0, sample_every=0.5)
        service = Service.connect(self.kube.kubeconfig, None, compute, controller, founding.REGION, self.log, options,
                                  self.catalog)
        service.closers.append(compute.close)
        return service.start()

    def stop(self) -> None:
        self._stop.set()
        for service in self.services:
            with contextlib.suppress(Exception):
                service.stop(grace=2.0)
        for thread in self._threads:
            thread.join(5)
        self.arm.stop()
        self.kube.stop()
        self.log.close()

    def _watch_books(self) -> None:
        while not self._stop.wait(0.2):
            if self.books is not None:
                self.books.sample()

    # --- looking ------------------------------------------------------------------------------
    def leader(self) -> Service | None:
        return next((s for s in self.services if s.is_leader), None)

    def counts(self) -> tuple[int, int]:
        running = total = 0
        for pod in self.kube.objects("pods", "default"):
            if not pod["metadata"]["name"].startswith("inflate-") or pod["metadata"].get("deletionTimestamp"):
                continue
            total += 1
            running += (pod.get("status") or {}).get("phase") == "Running"
        return running, total

    def wait(self, condition: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            self._stop.wait(0.05)
        return condition()

    # --- doing ---------------------------------------------------------------------------------
    def kube_fault(self) -> None:
        choice = self.rng.randrange(4)
        faults = self.kube.faults
        if choice == 0:
            faults.fail(500, path_contains=self.rng.choice(["/nodeclaims", "/nodes", "/pods", "/nodepools"]),
                        count=self.rng.randint(1, 3))
        elif choice == 1:
            faults.slow(0.3, count=3)
        elif choice == 2:
            faults.expire_watches(1)
        else:
            self.kube.drop_watches()
        self.kube_faults += 1

    def kill_leader(self) -> None:
        leader = self.leader()
        if leader is None:
            return
        # mid-launch: wait (briefly) for a create in flight
        self.wait(lambda: bool(leader.controller and leader.controller.launcher.in_flight()), 3.0)
        self._stop.wait(self.rng.uniform(0.0, 1.2))  # anywhere in the launch: NIC, VM PUT, polling, status write
        in_flight = len(leader.controller.launcher.in_flight()) if leader.controller else 0
        killed_at = time.monotonic()
        leader.kill()
        self.services.remove(leader)
        self.emit(f"  killed leader {leader.options.identity} with {in_flight} launch(es) in flight")
        standby = self.services[0] if self.services else None
        if standby is not None and self.wait(lambda: standby.is_leader, 10.0):
            self.failovers += 1
            self.takeovers.append(time.monotonic() - killed_at)
            self.emit(f"  {standby.options.identity} took over in {self.takeovers[-1]:.2f} s")
        self.services.append(self.replica())
        self.restarts += 1

    def run(self) -> dict[str, Any]:
        config = self.config
        started = time.monotonic()
        steps = max(config.kills * 2 + 2, 6)
        interval = config.duration / steps
        kill_at = set(self.rng.sample(range(1, steps), k=min(config.kills, steps - 1)))
        replicas = 0
        self.wait(lambda: self.leader() is not None, 10.0)
        for step in range(steps):
            replicas = min(config.replicas_target, replicas + max(2, config.replicas_target // (steps - 1)))
            founding.set_replicas(self.kube, replicas)
            self.emit(f"step {step + 1}/{steps}: inflate {replicas} replicas")
            for _ in range(self.rng.randint(1, 3)):
                self.kube_fault()
            if step == steps // 2 and config.external_cores:
                self.arm.set_usage("cores", config.external_cores)
                self.emit(f"  another workload takes {config.external_cores} vCPUs of the regional quota")
            if step in kill_at:
                self.kill_leader()
            self._stop.wait(max(0.0, started + interval * (step + 1) - time.monotonic()))
        founding.set_replicas(self.kube, config.replicas_target)
        self.emit("faults off; settling")
        self.arm.faults.clear()
        self.kube.faults.clear()
        fitting = self.pods_fitting()
        self.wait(lambda: self.counts()[0] >= fitting and not self._in_flight(), config.settle_timeout)
        grace = 3.0 + 1.0 + 1.0
        self.wait(lambda: self.leaked() == (0, 0), grace * 3)
        return self.figures(time.monotonic() - started, fitting)

    def _in_flight(self) -> bool:
        leader = self.leader()
        return bool(leader and leader.controller and leader.controller.launcher.in_flight())

    # --- the books --------------------------------------------------------------------------------
    def pods_fitting(self) -> int:
        it = next(t for t in self.catalog if t.name == SIZE)
        overhead = Resources(cpu_m=250, memory=481280 * 1024, pods=len(founding.DAEMONSETS))
        per_node = pods_that_fit(it, Resources(cpu_m=1000, memory=256 * 10**6, pods=1), overhead)
        quota = self.config.quota_cores - self.config.external_cores
        nodes = min(quota // it.vcpus, self.config.pool_cpu_limit // it.vcpus + OVERFLOW_LIMIT // it.vcpus)
        return min(self.config.replicas_target, per_node * nodes)

    def leaked(self) -> tuple[int, int]:
        claims = {o["metadata"]["name"] for o in self.kube.objects("nodeclaims")}
        vms = self.arm.vms
        leaked_vms = sum(1 for name in vms if name.removeprefix("aks-") not in claims)
        leaked_nics = sum(1 for name, nic in self.arm.nics.items()
                          if name.removeprefix("aks-") not in claims and name not in vms)
        return leaked_vms, leaked_nics

    def refusals_per_ttl(self) -> int:
        by_quota: dict[str, list[datetime]] = {}
        for rec in self.records:
            quota = rec.get("quota")
            if rec.get("event") != "nodeclaim.launch_failed" or not isinstance(quota, dict):
                continue
            at = datetime.fromisoformat(str(rec["time"]).replace("Z", "+00:00"))
            by_quota.setdefault(f"{quota.get('scope')}:{quota.get('name')}", []).append(at)
        worst = 0
        for key, times in by_quota.items():
            ttl = TTL["spot-quota"] if key.startswith("spot") else (
                TTL["regional-quota"] if key.startswith("regional") else TTL["family-quota"])
            times.sort()
            for i, first in enumerate(times):
                worst = max(worst, sum(1 for t in times[i:] if t - first < ttl))
        return worst

    def duplicates(self) -> int:
        created: dict[str, int] = {}
        for r in self.arm.request_log:
            if r.op == "create_vm" and r.method == "PUT" and r.status == 201:
                name = r.path.rstrip("/").rsplit("/", 1)[-1]
                created[name] = created.get(name, 0) + 1
        return sum(1 for n in created.values() if n > 1)

    def figures(self, elapsed: float, fitting: int) -> dict[str, Any]:
        leaked_vms, leaked_nics = self.leaked()
        launches = sum(1 for r in self.records if r.get("event") in ("nodeclaim.launched", "vm.adopted"))
        arm_faults = sum(self.arm.faults.fired())
        untagged = sum(1 for vm in self.arm.vms.values() if vm.tags.get(TAG_CLUSTER) != CLUSTER)
        assert untagged == 0, "every VM the provisioner makes carries the cluster tag"
        return {
            "seed": self.config.seed,
            "duration_s": round(elapsed, 1),
            "launches": launches,
            "faults_injected": arm_faults + self.kube_faults,
            "restarts": self.restarts,
            "failovers": self.failovers,
            "leaked_vms": leaked_vms,
            "leaked_nics": leaked_nics,
            "duplicate_vms": self.duplicates(),
            "limit_breaches": self.books.breaches if self.books else 0,
            "max_refusals_per_scope_per_ttl": self.refusals_per_ttl(),
            "pods_fitting_quota": fitting,
            "pods_running": self.counts()[0],
        }


def passed(figures: dict[str, Any]) -> bool:
    return bool(figures["leaked_vms"] == 0 and figures["leaked_nics"] == 0 and figures["duplicate_vms"] == 0
            and figures["limit_breaches"] == 0 and figures["max_refusals_per_scope_per_ttl"] <= 1
            and figures["pods_running"] == figures["pods_fitting_quota"])


def run_chaos(config: ChaosConfig, emit: Callable[[str], None], log_path: str = "") -> dict[str, Any]:
    chaos = Chaos(config, emit, log_path)
    try:
        chaos.start()
        return chaos.run()
    finally:
        chaos.stop()


EPILOG = """
examples:
  karp-sim chaos                         # seed 1, 60 s of chaos, then the books
  karp-sim chaos --json --seed 7 --duration 120
  karp-sim chaos --kills 5 --log /tmp/chaos.log

Exit code 0 when every invariant holds (no leaked VM or NIC, no second VM for a claim, no
NodePool limit exceeded, at most one quota refusal per quota per cache TTL, every pod that
fits the quota Running), 1 otherwise, 2 for bad options.
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="karp-sim chaos",
        description="Run the provisioner (two replicas) against both emulators under random faults, leader "
        "crashes mid-launch and fail-overs; then check for leaked or duplicated VMs, limit breaches and "
        "repeated quota refusals.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of every random choice (default 1)")
    parser.add_argument("--duration", type=float, default=60.0, metavar="SECONDS",
                        help="seconds of chaos before settling (default 60; at least 5)")
    parser.add_argument("--kills", type=int, default=3, help="leader crashes to inject (default 3)")
    parser.add_argument("--log", metavar="PATH", default="", help="also write the provisioner's JSON log here")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(list(argv or []))
    if args.duration < 5:
        print(f"karp-sim chaos: --duration {args.duration:g}: must be at least 5 seconds", file=sys.stderr)
        return 2
    if args.kills < 0:
        print(f"karp-sim chaos: --kills {args.kills}: must not be negative", file=sys.stderr)
        return 2
    if args.log and not os.path.isdir(os.path.dirname(os.path.abspath(args.log))):
        print(f"karp-sim chaos: --log {args.log}: directory {os.path.dirname(os.path.abspath(args.log))} does not exist",
              file=sys.stderr)
        return 2
    logging.getLogger("provisioner.kube").setLevel(logging.CRITICAL)  # expected noise under injected faults
    logging.getLogger("azure").setLevel(logging.CRITICAL)
    lock = threading.Lock()

    def emit(line: str) -> None:
        with lock:
            stream = sys.stderr if args.json else sys.stdout
            stream.write(line + "\n")
            stream.flush()

    config = ChaosConfig(seed=args.seed, duration=args.duration, kills=args.kills)
    emit(f"karp-sim chaos: seed {config.seed}, {config.duration:g} s, {config.kills} leader crash(es), "
         f"regional quota {config.quota_cores} vCPUs, nodepool {POOLS[0]} limited to {config.pool_cpu_limit} cpu, "
         f"{POOLS[1]} taking the rest")
    try:
        figures = run_chaos(config, emit, args.log)
    except OSError as e:
        print(f"karp-sim chaos: --log {args.log}: {e.strerror or e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({k: figures[k] for k in KEYS}))
    else:
        width = max(len(k) for k in KEYS)
        for key in KEYS:
            print(f"  {key:<{width}}  {figures[key]}")
        print("all invariants hold" if passed(figures) else "INVARIANT BROKEN")
    return 0 if passed(figures) else 1


