"""One provisioning pass: gather, then decide, then act.

1. *Gather*: the cluster view (informer caches), the catalog with the offerings Azure
   refused recently marked unavailable, the quota headroom (usages minus creates in
   flight; quota-aware mode only), and now.
2. *Decide*: the pure planner turns that frozen snapshot into ``Decisions``.
3. *Act*: NodePool limits are checked again; each new NodeClaim is created in the cluster,
   its pods get a ``Nominated`` Event, and its launch is handed to the launch pool. Pods
   that cannot be placed are reported (log line, Events on the pods and the NodePool,
   naming the blocking quota, its numbers and the limit that would unblock them).

In ``karpenter`` mode the same pass reproduces the reference behaviour: no quota in the
snapshot, the cheapest fitting size first, and regional quota errors are not remembered.
"""

from __future__ import annotations

import secrets
import string
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from provisioner.controller.cluster import ClaimRecord, ClusterPort, ClusterView
from provisioner.controller.conditions import initial_conditions
from provisioner.controller.decisions import Blocked, ClaimDecision, Decisions
from provisioner.controller.launch import Launcher, LaunchRequest, LaunchResult
from provisioner.controller.quota_cache import QuotaCache
from provisioner.controller.reporting import Reporter
from provisioner.controller.unavailable import UnavailableOfferings
from provisioner.model.instance_type import InstanceType
from provisioner.model.nodepool import AKSNodeClass, NodePool
from provisioner.model.pod import Pod
from provisioner.model.quota import QuotaSnapshot
from provisioner.observability.logwriter import LogWriter

__all__ = ["PlanFunction", "PlanInput", "Provisioner", "ProvisionerConfig", "names_list"]


@dataclass(frozen=True, slots=True)
class PlanInput:
    """The frozen snapshot handed to the planner."""

    view: ClusterView
    catalog: tuple[InstanceType, ...]
    quota: QuotaSnapshot | None  # None in karpenter mode: quota-blind
    in_flight: tuple[ClaimRecord, ...]
    now: datetime
    quota_aware: bool


PlanFunction = Callable[[PlanInput], Decisions]


@dataclass(frozen=True, slots=True)
class ProvisionerConfig:
    cluster: str
    subnet_id: str
    mode: str = "quota-aware"
    image_prefix: str = "/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images"
    image_version: str = "202611.20.0"


@dataclass
class PassStats:
    passes: int = 0
    claims_created: int = 0
    last_duration: float = 0.0
    blocked_pods: int = 0
    history: list[str] = field(default_factory=list)


def names_list(keys: list[str], shown: int = 5) -> str:
    """Karpenter's way of naming many objects: ``a, b, c and 7 other(s)``."""
    if len(keys) <= shown:
        return ", ".join(keys)
    return ", ".join(keys[:shown]) + f" and {len(keys) - shown} other(s)"


def _suffix() -> str:
    alphabet = string.ascii_lowercase + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(5))


def image_id(config: ProvisionerConfig, node_class: AKSNodeClass | None, it: InstanceType) -> str:
    """The AKS node image for a size: the NodeClass's family, gen2 for current sizes, arm64 when needed."""
    family = (node_class.image_family if node_class else "Ubuntu2204").lower()
    base = "2204gen2containerd" if family in ("ubuntu", "ubuntu2204") else f"{family}gen2containerd"
    if it.arch == "arm64":
        base = base.replace("gen2", "gen2arm64")
    return f"{config.image_prefix}/{base}/versions/{config.image_version}"


class Provisioner:
    def __init__(
        self,
        cluster: ClusterPort,
        plan: PlanFunction,
        launcher: Launcher,
        unavailable: UnavailableOfferings,
        catalog: Callable[[], tuple[InstanceType, ...]],
        log: LogWriter,
        reporter: Reporter,
        config: ProvisionerConfig,
        clock: Callable[[], datetime],
        quota: QuotaCache | None = None,
        on_launched: Callable[[LaunchResult], None] | None = None,
    ) -> None:
        self._cluster = cluster
        self._plan = plan
        self._launcher = launcher
        self._unavailable = unavailable
        self._catalog = catalog
        self._log = log
        self._reporter = reporter
        self._config = config
        self._clock = clock
        self._quota = quota
        self._on_launched = on_launched
        self._lock = threading.Lock()
        self.failed: dict[str, datetime] = {}  # claims whose launch failed, until they are deleted
        self.records: dict[str, ClaimRecord] = {}  # claims this controller created, as last written
        self.claim_pods: dict[str, tuple[Pod, ...]] = {}
        self.stats = PassStats()

    @property
    def quota_aware(self) -> bool:
        return self._config.mode == "quota-aware"

    def gather(self) -> PlanInput:
        view = self._cluster.view()
        now = self._clock()
        quota: QuotaSnapshot | None = None
        if self.quota_aware and self._quota is not None:
            try:
                self._quota.refresh_if_stale()
            except Exception as e:  # fail open on the last good view, and say so
                self._log.log("controller.error", step="quota", message="could not read quota usages; using the last good view",
                              error=str(e))
            quota = self._quota.snapshot()
        catalog = tuple(self._unavailable.apply(list(self._catalog()), now))
        with self._lock:
            failed = set(self.failed)
        # the claims this controller wrote are known before the informer shows them (no double planning)
        claims = {c.name: c for c in view.claims}
        with self._lock:
            for name, record in self.records.items():
                seen = claims.get(name)
                claims[name] = record if seen is None else replace(record, deleting=seen.deleting)
        in_flight = tuple(
            c for c in claims.values()
            if not c.deleting and c.name not in failed and c.status_of("Launched") != "False"
        )
        return PlanInput(view, catalog, quota, in_flight, now, self.quota_aware)

    def reconcile(self) -> Decisions | None:
        """Run one pass; returns what was decided (None when no pod was provisionable)."""
        started = time.perf_counter()
        snapshot = self.gather()
        pods = snapshot.view.pending
        if not pods:
            return None
        keys = [p.key for p in pods]
        self._log.log("pods.found", Pods=names_list(keys), duration=f"{(time.perf_counter() - started) * 1000:.3f}ms")
        decisions = self._plan(snapshot)
        self.stats.passes += 1
        if decisions.claims:
            self._log.log("plan.computed", nodeclaims=len(decisions.claims),
                          pods=sum(len(c.pods) for c in decisions.claims))
        for nomination in decisions.nominations:
            for pod in nomination.pods:
                self._reporter.nominated(pod, nomination.target)
        limits_used = self._nodepool_usage(snapshot)
        for claim in decisions.claims:
            self._act(claim, snapshot, limits_used)
        self._reporter.blocked(list(decisions.blocked))
        self.stats.blocked_pods = sum(len(b.pods) for b in decisions.blocked)
        self.stats.last_duration = time.perf_counter() - started
        return decisions

    def _nodepool_usage(self, snapshot: PlanInput) -> dict[str, tuple[int, int, int]]:
        """(millicores, bytes, nodes) of capacity each NodePool holds: claims in flight, and its nodes
        that no such claim accounts for."""
        by_name = {it.name: it for it in snapshot.catalog}
        usage: dict[str, tuple[int, int, int]] = {}

        def add(pool: str, cpu: int, memory: int) -> None:
            c, m, n = usage.get(pool, (0, 0, 0))
            usage[pool] = (c + cpu, m + memory, n + 1)

        claimed = set()
        for c in snapshot.in_flight:
            it = by_name.get(c.instance_type)
            add(c.nodepool, it.millicores if it else c.requests.cpu_m, it.memory_bytes if it else c.requests.memory)
            if c.node_name:
                claimed.add(c.node_name)
        for record in snapshot.view.nodes:
            node = record.node
            if node.nodepool and node.name not in claimed:
                it = by_name.get(node.label_map.get("node.kubernetes.io/instance-type", ""))
                add(node.nodepool, it.millicores if it else node.allocatable.cpu_m,
                    it.memory_bytes if it else node.allocatable.memory)
        return usage

    def _within_limits(self, pool: NodePool, it: InstanceType, usage: dict[str, tuple[int, int, int]]) -> bool:
        cpu, memory, nodes = usage.get(pool.name, (0, 0, 0))
        limits = pool.limits
        if limits.cpu_m is not None and cpu + it.millicores > limits.cpu_m:
            return False
        if limits.memory is not None and memory + it.memory_bytes > limits.memory:
            return False
        return limits.nodes is None or nodes + 1 <= limits.nodes

    def _act(self, decision: ClaimDecision, snapshot: PlanInput, usage: dict[str, tuple[int, int, int]]) -> None:
        pool = decision.nodepool
        options = [it for it in decision.options if not it.not_available]
        choice = self._choose(options, decision)
        if choice is None:
            self._reporter.blocked([Blocked(decision.pods, "no available offering among the fitting sizes", pool.name)])
            return
        it, zone = choice
        if not self._within_limits(pool, it, usage):
            self._reporter.blocked([Blocked(decision.pods, f"nodepool {pool.name} limits would be exceeded by "
                                            f"{it.name}", pool.name, nodepool_limit=True)])
            return
        cpu, memory, nodes = usage.get(pool.name, (0, 0, 0))
        usage[pool.name] = (cpu + it.millicores, memory + it.memory_bytes, nodes + 1)
        name = decision.name or f"{pool.name}-{_suffix()}"
        now = self._clock()
        labels = {**pool.label_map, **it.labels(), "karpenter.sh/capacity-type": decision.capacity_type}
        if zone:
            labels["topology.kubernetes.io/zone"] = f"{it.region}-{zone}" if it.region else zone
        record = ClaimRecord(name, pool.name, it.name, decision.capacity_type, zone, decision.requests,
                             conditions=tuple(initial_conditions(now)), labels=labels)
        node_class = next((nc for nc in snapshot.view.nodeclasses if nc.name == pool.node_class_ref.name), None)
        taints = [{"key": t.key, "value": t.value, "effect": t.effect} for t in pool.taints]
        with self._lock:
            self.records[name] = record
            self.claim_pods[name] = decision.pods
        self._cluster.create_nodeclaim(record, list(decision.requirements), taints, pool.node_class_ref.name)
        self.stats.claims_created += 1
        self._log.log("nodeclaim.created", name=name, NodePool={"name": pool.name},
                      requests=decision.requests.to_requests(),
                      **{"instance-types": names_list([o.name for o in options])})
        for pod in decision.pods:
            self._reporter.nominated(pod, f"nodeclaim/{name}")
        request = LaunchRequest(
            claim=name, nodepool=pool.name, instance_type=it, capacity_type=decision.capacity_type, zone=zone,
            image_id=image_id(self._config, node_class, it),
            subnet_id=(node_class.vnet_subnet_id if node_class and node_class.vnet_subnet_id else self._config.subnet_id),
            cluster=self._config.cluster, os_disk_gb=node_class.os_disk_size_gb if node_class else 128,
        )
        self._launcher.submit(request, self._on_launched)

    def _choose(self, options: list[InstanceType], decision: ClaimDecision) -> tuple[InstanceType, str] | None:
        """The first size (cheapest first) with an available offering of the capacity type (and zone)."""
        for it in options:
            offers = [o for o in it.offerings if o.capacity_type == decision.capacity_type and o.available
                      and (not decision.zone or o.zone == decision.zone)
                      and (not decision.zones or o.zone in decision.zones)]
            if not it.offerings and not decision.zone:
                return it, ""
            if offers:
                offers.sort(key=lambda o: (o.price_per_hour, o.zone))
                return it, decision.zone or offers[0].zone
        return None

    def mark_failed(self, claim: str) -> None:
        with self._lock:
            self.failed[claim] = self._clock()

    def forget_failed(self, older_than: float) -> list[str]:
        """Failed claims old enough to delete now (their condition said why long enough)."""
        now = self._clock()
        with self._lock:
            due = [c for c, at in self.failed.items() if (now - at).total_seconds() >= older_than]
            for c in due:
                del self.failed[c]
                self.records.pop(c, None)
                self.claim_pods.pop(c, None)
        return due

    def record(self, name: str) -> ClaimRecord | None:
        with self._lock:
            return self.records.get(name)

    def store(self, record: ClaimRecord) -> None:
        with self._lock:
            self.records[record.name] = record

    def forget(self, name: str) -> None:
        """Drop a claim that is gone from this loop's memory (it no longer counts as in flight)."""
        with self._lock:
            self.records.pop(name, None)
            self.claim_pods.pop(name, None)
            self.failed.pop(name, None)
