"""Upkeep: recovery, liveness, garbage collection and disruption, on one loop beside provisioning.

Each step gathers a ``Fleet`` (informer caches) and the cloud listings it needs, asks a
pure function what to do (``recovery.decide``, ``liveness.expired_claims``,
``garbage.collect``, ``disruption.plan``), then acts through the ports:

=============  =========  ===========================================================
step           every      acts
=============  =========  ===========================================================
recovery       2 s        adopts or cleans claims an earlier run (or replica) left
liveness       5 s        deletes claims (and VMs) past the launch / registration timeout
garbage        2 min      deletes VMs and NICs of ours with no claim; claims with no VM
disruption     10 s       removes empty nodes, replaces expired ones, within budgets
=============  =========  ===========================================================

A claim is given up by ``terminate``: the VM is deleted (and waited for), then the NIC,
the Node and the NodeClaim, and the provisioning loop forgets it. The order means a
NodeClaim never disappears while its VM still runs; a crash half-way leaves either a VM
with no claim or a claim with no VM, both of which garbage collection finishes.

Every write goes through ports that a replica without the leader lease cannot use.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Protocol

from provisioner.controller import disruption, garbage, liveness, recovery
from provisioner.controller.cluster import ClaimRecord
from provisioner.controller.conditions import set_condition
from provisioner.controller.fleet import DISRUPTED_TAINT, ClaimInfo, Fleet, FleetPort, parse_time
from provisioner.controller.launch import TAG_CLUSTER, resource_name
from provisioner.model.errors import CloudError
from provisioner.model.ports import Compute
from provisioner.observability.logwriter import LogWriter

__all__ = ["HEALTH_CONDITION", "Tracker", "Upkeep", "UpkeepOptions"]

HEALTH_CONDITION = "NodeRegistrationHealthy"


@dataclass(frozen=True, slots=True)
class UpkeepOptions:
    cluster: str
    launch_timeout: float = 300.0
    registration_timeout: float = 900.0
    gc_interval: float = 120.0
    gc_grace: float = 300.0
    recovery_interval: float = 2.0
    recovery_grace: float = 30.0
    liveness_interval: float = 5.0
    disruption_interval: float = 10.0
    disruption: bool = True
    tick: float = 1.0


class Tracker(Protocol):
    """What upkeep needs of the provisioning loop: the claims it tracks in memory."""

    records: dict[str, ClaimRecord]

    def store(self, record: ClaimRecord) -> None: ...

    def forget(self, name: str) -> None: ...


def _utc_now() -> datetime:
    from datetime import UTC

    return datetime.now(UTC)


class Upkeep:
    def __init__(
        self,
        options: UpkeepOptions,
        fleet: FleetPort,
        compute: Compute,
        tracker: Tracker,
        log: LogWriter,
        clock: Callable[[], datetime] = _utc_now,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.options = options
        self.fleet_port = fleet
        self.compute = compute
        self.tracker = tracker
        self.log = log
        self.clock = clock
        self.monotonic = monotonic
        self.liveness = liveness.LivenessConfig(timedelta(seconds=options.launch_timeout),
                                                timedelta(seconds=options.registration_timeout))
        self.first_seen: dict[str, datetime] = {}
        self.empty_since: dict[str, datetime] = {}
        self.held: dict[str, str] = {}
        self._last: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.stats: dict[str, int] = {k: 0 for k in (
            "adopted", "resumed", "cleaned", "launch_timeouts", "registration_timeouts", "gc_vms", "gc_nics",
            "gc_claims", "disrupted_empty", "disrupted_expired", "errors")}
        self.errors: list[str] = []
        self.last_tick: float = 0.0

    # --- the loop ---------------------------------------------------------------------
    def start(self) -> Upkeep:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="karp-upkeep", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self._thread = None

    def _run(self) -> None:
        while not self._stop.wait(self.options.tick):
            self.tick()

    def _due(self, step: str, every: float) -> bool:
        now = self.monotonic()
        last = self._last.get(step)
        if last is not None and now - last < every:
            return False
        self._last[step] = now
        return True

    def tick(self, force: bool = False) -> None:
        """Run every step that is due (all of them with ``force``); a failing step is retried next time."""
        o = self.options
        steps: list[tuple[str, float, Callable[[Fleet, datetime], Any]]] = [
            ("recovery", o.recovery_interval, self.recover),
            ("liveness", o.liveness_interval, self.check_liveness),
            ("garbage", o.gc_interval, self.collect_garbage),
        ]
        if o.disruption:
            steps.append(("disruption", o.disruption_interval, self.disrupt))
        for name, every, step in steps:
            if self._stop.is_set():
                return
            if not (self._due(name, every) or force):
                continue
            try:
                step(self.fleet_port.fleet(), self.clock())
            except Exception as e:  # logged and counted; the next round tries again
                self._error(f"{name}: {type(e).__name__}: {e}")
        self.last_tick = self.monotonic()

    def _error(self, text: str) -> None:
        with self._lock:
            self.stats["errors"] += 1
            self.errors = [*self.errors[-49:], text]

    # --- acting -------------------------------------------------------------------------
    def forget(self, claim: str) -> None:
        """Drop a claim from the provisioning loop's memory (it no longer counts as in flight)."""
        self.tracker.forget(claim)

    def terminate(self, claim: str, node: str, reason: str) -> None:
        """Delete the claim's VM (waiting for it), its NIC, its Node and the claim itself."""
        name = resource_name(claim)
        vm = self.compute.get_vm(name)
        if vm is not None and garbage.owned(vm.tags, self.options.cluster):
            self.compute.delete_vm(name)
            self.log.log("gc.vm_deleted", message=f"deleted virtual machine {name}", vm=name,
                         NodeClaim={"name": claim}, reason=reason)
        with contextlib.suppress(CloudError):  # still attached or throttled: garbage collection retries
            nic = next((n for n in self.compute.list_nics({TAG_CLUSTER: self.options.cluster}) if n.name == name), None)
            if nic is not None:
                self.compute.delete_nic(name)
                self.log.log("nic.deleted", name=claim, message=f"deleted network interface {name}", nic=name)
        if node:
            self.fleet_port.delete_node(node)
            self.log.log("node.deleted", name=node, reason=reason)
        self.fleet_port.delete_nodeclaim(claim)
        self.forget(claim)
        self.log.log("nodeclaim.deleted", name=claim, reason=reason)

    # --- recovery -------------------------------------------------------------------------
    def recover(self, fleet: Fleet, now: datetime) -> list[recovery.Recovery]:
        tracked = list(self.tracker.records)
        vms = {}
        for name in recovery.needs_lookup(fleet.claims, tracked):
            try:
                vms[name] = self.compute.get_vm(resource_name(name))
            except CloudError as e:
                self._error(f"recovery: reading VM of {name}: {e}")
        decisions = recovery.decide(fleet.claims, tracked, vms, now, timedelta(seconds=self.options.recovery_grace))
        for decision in decisions:
            record = decision.claim.record
            if decision.action == recovery.RESUME:
                self.tracker.store(record)
                self.stats["resumed"] += 1
            elif decision.action == recovery.ADOPT and decision.vm is not None:
                vm = decision.vm
                conditions, _ = set_condition(list(record.conditions), "Launched", "True", "Launched", "", now)
                adopted = replace(record, provider_id=vm.provider_id, conditions=tuple(conditions), launched_at=now,
                                  zone=vm.zone or record.zone)
                self.fleet_port.update_nodeclaim_status(adopted)
                self.tracker.store(adopted)
                self.stats["adopted"] += 1
                self.log.log("vm.adopted", name=record.name, vm=vm.name, **{"provider-id": vm.provider_id})
            elif decision.action == recovery.CLEAN:
                self.terminate(record.name, record.node_name, f"recovery: {decision.why}")
                self.stats["cleaned"] += 1
        return decisions

    # --- liveness -------------------------------------------------------------------------
    def check_liveness(self, fleet: Fleet, now: datetime) -> list[liveness.Expired]:
        expired = liveness.expired_claims(fleet.claims, now, self.liveness)
        for item in expired:
            self.log.log(item.event, name=item.claim, NodePool={"name": item.nodepool}, reason=item.reason,
                         error=item.message)
            self.terminate(item.claim, item.node, item.reason)
            key = "launch_timeouts" if item.reason == liveness.LAUNCH_TIMEOUT else "registration_timeouts"
            self.stats[key] += 1
            if item.nodepool:
                self.fleet_port.set_nodepool_condition(item.nodepool, HEALTH_CONDITION, "False", item.reason,
                                                       item.message, now)
                self.fleet_port.event("NodePool", "", item.nodepool, "Warning", item.reason, item.message)
            self.fleet_port.event("NodeClaim", "", item.claim, "Warning", item.reason, item.message)
        self._heal(fleet, now, {e.nodepool for e in expired})
        return expired

    def _heal(self, fleet: Fleet, now: datetime, just_failed: set[str]) -> None:
        """``NodeRegistrationHealthy`` back to True once a claim of the pool registers after the failure."""
        for pool in fleet.pools:
            if pool.name in just_failed:
                continue
            health = next((c for c in pool.conditions if c.get("type") == HEALTH_CONDITION), None)
            if health is None or health.get("status") != "False":
                continue
            failed_at = parse_time(health.get("lastTransitionTime"))
            for info in fleet.claims:
                if info.record.nodepool != pool.name:
                    continue
                registered = next((c for c in info.record.conditions if c.get("type") == "Registered"
                                   and c.get("status") == "True"), None)
                at = parse_time(registered.get("lastTransitionTime")) if registered else None
                if at is not None and (failed_at is None or at > failed_at):
                    self.fleet_port.set_nodepool_condition(pool.name, HEALTH_CONDITION, "True", HEALTH_CONDITION,
                                                           f"NodeClaim {info.name} registered", now)
                    break

    # --- garbage collection ------------------------------------------------------------------
    def known_claims(self, fleet: Fleet, now: datetime) -> set[str]:
        """Claims in the cluster plus those this process wrote recently (the informer may lag)."""
        seen = {c.name for c in fleet.claims}
        known = set(seen)
        for name, record in list(self.tracker.records.items()):
            if name in seen:
                continue
            born = liveness.started_at(ClaimInfo(record))
            if born is None or now - born < timedelta(seconds=self.options.gc_grace):
                known.add(name)
            else:
                self.forget(name)  # deleted behind our back long ago
        return known

    def collect_garbage(self, fleet: Fleet, now: datetime) -> garbage.GarbagePlan:
        tags = {TAG_CLUSTER: self.options.cluster}
        vms = self.compute.list_vms(tags)
        nics = self.compute.list_nics(tags)
        fleet = self.fleet_port.fleet()  # after the listings: a claim launched meanwhile is seen
        for kind, names in (("vm", [v.name for v in vms]), ("nic", [n.name for n in nics])):
            current = {f"{kind}:{n}" for n in names}
            for key in [k for k in self.first_seen if k.startswith(f"{kind}:") and k not in current]:
                del self.first_seen[key]
            for key in current:
                self.first_seen.setdefault(key, now)
        plan = garbage.collect(vms, nics, fleet.claims, self.known_claims(fleet, now), self.options.cluster, now,
                               timedelta(seconds=self.options.gc_grace), self.first_seen)
        by_name = {v.name: v for v in vms}
        for name in plan.vms:
            if not garbage.owned(by_name[name].tags, self.options.cluster):
                continue  # never reached: collect() checks too
            self.compute.delete_vm(name)
            self.stats["gc_vms"] += 1
            self.log.log("gc.vm_deleted", vm=name, reason="no nodeclaim")
        nic_tags = {n.name: n.tags for n in nics}
        for name in plan.nics:
            if not garbage.owned(nic_tags[name], self.options.cluster):
                continue
            try:
                self.compute.delete_nic(name)
            except CloudError as e:
                self._error(f"garbage: NIC {name}: {e}")
                continue
            self.stats["gc_nics"] += 1
            self.log.log("gc.nic_deleted", nic=name, reason="no nodeclaim and no virtual machine")
        for claim, node in plan.claims:
            if self.compute.get_vm(resource_name(claim)) is not None:
                continue  # listed before it was created: not gone
            if node:
                self.fleet_port.delete_node(node)
            self.fleet_port.delete_nodeclaim(claim)
            self.forget(claim)
            self.stats["gc_claims"] += 1
            self.log.log("gc.nodeclaim_deleted", name=claim, reason="its virtual machine is gone")
        return plan

    # --- disruption ------------------------------------------------------------------------------
    def disrupt(self, fleet: Fleet, now: datetime) -> disruption.DisruptionPlan:
        plan = disruption.plan(fleet, now, self.empty_since)
        self.empty_since = dict(plan.empty_since)
        self.held = dict(plan.held)  # node -> why it was left alone this round
        for candidate in plan.disrupt:
            self.log.log("disruption.started", message=f"disrupting node(s) via {candidate.reason.lower()}",
                         reason=candidate.reason, NodeClaim={"name": candidate.claim},
                         Node={"name": candidate.node}, NodePool={"name": candidate.nodepool},
                         pods=len(candidate.pods))
            self.fleet_port.taint_node(candidate.node, DISRUPTED_TAINT, "NoSchedule")
            for pod in candidate.pods:
                self.fleet_port.evict_pod(pod.namespace, pod.name)
            self.terminate(candidate.claim, candidate.node, candidate.reason)
            self.stats["disrupted_empty" if candidate.reason == disruption.EMPTY else "disrupted_expired"] += 1
            self.fleet_port.event("NodeClaim", "", candidate.claim, "Normal", "DisruptionTerminating",
                                  f"Disrupting NodeClaim: {candidate.reason}")
        return plan
