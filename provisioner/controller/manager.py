"""The controller assembled: caches, launch pool, provisioning pass, lifecycle, and their loops.

``Controller`` owns two threads once started:

- the *batch loop*: waits for the batching window to close (or a 10 s requeue while
  provisionable pods remain, as Karpenter does), then runs one provisioning pass;
- the *tick loop* (every ``tick`` seconds): feeds newly provisionable pods to the batcher,
  re-reads quota when stale, registers and initialises launched claims, and deletes failed
  claims after their linger.

Everything it talks to comes in through ports: ``ClusterPort`` (Kubernetes), ``Compute``
(Azure), the planner function and the catalog, so the same assembly runs in a cluster,
in the emulators, or against fakes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from provisioner.controller.batcher import Batcher
from provisioner.controller.cluster import ClusterPort
from provisioner.controller.launch import Launcher, LaunchResult
from provisioner.controller.lifecycle import Lifecycle
from provisioner.controller.provisioning import PlanFunction, Provisioner, ProvisionerConfig
from provisioner.controller.quota_cache import QuotaCache
from provisioner.controller.reporting import EventSink, Reporter
from provisioner.controller.unavailable import UnavailableOfferings
from provisioner.model.instance_type import InstanceType
from provisioner.model.ports import Compute
from provisioner.model.quota import QuotaSnapshot
from provisioner.observability.logwriter import LogWriter

__all__ = ["Controller", "ControllerOptions"]


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class ControllerOptions:
    cluster: str
    subnet_id: str
    mode: str = "quota-aware"
    batch_idle: float = 1.0
    batch_max: float = 10.0
    quota_refresh: float = 60.0
    requeue: float = 10.0
    tick: float = 0.25
    failed_linger: float = 5.0
    launch_workers: int = 8


class Controller:
    def __init__(
        self,
        options: ControllerOptions,
        cluster: ClusterPort,
        compute: Compute,
        plan: Callable[[UnavailableOfferings], PlanFunction],
        catalog: Callable[[], tuple[InstanceType, ...]],
        log: LogWriter,
        events: EventSink,
        clock: Callable[[], datetime] = _utcnow,
        monotonic: Callable[[], float] = time.monotonic,
        is_leader: Callable[[], bool] | None = None,
    ) -> None:
        self.options = options
        self.is_leader = is_leader or (lambda: True)
        self.cluster = cluster
        self.log = log
        self.clock = clock
        self.unavailable = UnavailableOfferings(cache_regional=options.mode == "quota-aware")
        self.quota = QuotaCache(compute.read_quota, timedelta(seconds=options.quota_refresh), clock,
                                on_refresh=self._quota_read)
        quota_aware = options.mode == "quota-aware"
        self.launcher = Launcher(compute, log, self.unavailable, clock, quota=self.quota if quota_aware else None,
                                 workers=options.launch_workers)  # karpenter mode never reads usages
        self.reporter = Reporter(log, events, clock)
        self.batcher = Batcher(options.batch_idle, options.batch_max, clock=monotonic)
        self.provisioner = Provisioner(
            cluster, plan(self.unavailable), self.launcher, self.unavailable, catalog, log, self.reporter,
            ProvisionerConfig(options.cluster, options.subnet_id, options.mode), clock, self.quota,
            on_launched=self._launched,
        )
        self.lifecycle = Lifecycle(cluster, self.provisioner, self.reporter, log, clock, self._replan,
                                   options.failed_linger)
        self._monotonic = monotonic
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._last_pass = 0.0
        self._known: set[str] = set()  # provisionable pods already seen: only newcomers open a window
        self.errors: list[str] = []

    # --- callbacks ----------------------------------------------------------------------
    def _quota_read(self, snapshot: QuotaSnapshot) -> None:
        """``updated quota usages``: the regional, spot and non-empty family figures, as the provider logs them."""
        shown = [q for q in snapshot.items.values() if q.scope != "family" or q.usage]
        self.log.log("quota.updated", region=snapshot.region,
                     quotas=", ".join(f"{q.name}: {q.usage}/{q.limit}" for q in shown),
                     regional={"usage": q.usage, "limit": q.limit} if (q := snapshot.get("cores")) else None)

    def _launched(self, result: LaunchResult) -> None:
        self.lifecycle.launched(result)

    def _replan(self) -> None:
        """After a failed launch: let the pods open a new batching window (no hot retry loop)."""
        self.batcher.poke()

    # --- one step at a time (tests) -------------------------------------------------------
    def feed(self) -> int:
        """Open or extend the batching window for pods that just became provisionable."""
        current = set(self.cluster.pending_keys())
        fresh = current - self._known
        self._known = current
        return self.batcher.add(sorted(fresh))

    def run_pass(self) -> None:
        self._last_pass = self._monotonic()
        self.provisioner.reconcile()

    # --- threads -----------------------------------------------------------------------
    def start(self) -> None:
        self.log.log("process.starting", mode=self.options.mode, cluster=self.options.cluster)
        if self.options.mode == "quota-aware":
            try:
                self.quota.refresh()
            except Exception as e:
                self.log.log("controller.error", step="quota", message="could not read quota usages", error=str(e))
        self._stop.clear()
        self._threads = [
            threading.Thread(target=self._batch_loop, name="karp-batch", daemon=True),
            threading.Thread(target=self._tick_loop, name="karp-tick", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.batcher.stop()
        for thread in self._threads:
            thread.join(timeout=10)
        self._threads = []
        self.launcher.shutdown(wait=True)
        self.log.log("process.stopping")

    def _guard(self, what: str, step: Callable[[], object]) -> None:
        try:
            step()
        except Exception as e:  # a failing step is logged and retried on the next round
            self.errors.append(f"{what}: {type(e).__name__}: {e}")
            self.log.log("controller.error", step=what, error=f"{type(e).__name__}: {e}")

    def _batch_loop(self) -> None:
        while not self._stop.is_set():
            keys = self.batcher.wait(timeout=self.options.requeue)
            if self._stop.is_set():
                return
            if keys is None and self._monotonic() - self._last_pass < self.options.requeue:
                continue
            if self.is_leader():  # a standby replica watches but never acts
                self._guard("provisioning", self.run_pass)

    def _tick_loop(self) -> None:
        while not self._stop.wait(self.options.tick):
            self._guard("watch", self.feed)
            if not self.is_leader():
                continue
            self._guard("registration", self.lifecycle.tick)
            if self.options.mode == "quota-aware":
                self._guard("quota", self.quota.refresh_if_stale)
