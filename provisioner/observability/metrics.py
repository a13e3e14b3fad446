"""The provisioner's Prometheus metrics.

Counters follow the log: ``Metrics.observe`` is a ``LogWriter`` listener, so every launch,
failure, timeout, garbage collection and disruption that is logged is counted, by the
same event keys (one source of truth). Gauges describe the present and are set from a
``Sample`` taken every few seconds by whoever runs the controller (``Metrics.update``).

=========================================  =========  =====================================
name                                       type       labels
=========================================  =========  =====================================
karp_pods_pending                          gauge
karp_pods_provisioned_total                counter                (pods placed on new claims)
karp_scheduling_duration_seconds           histogram              (one provisioning pass)
karp_nodeclaims_created_total              counter    nodepool
karp_nodeclaims_launched_total             counter
karp_nodeclaims_launch_failures_total      counter    code        (Azure's error code)
karp_nodeclaims_terminated_total           counter    reason
karp_nodeclaims_timeouts_total             counter    reason      (LaunchTimeout, RegistrationTimeout)
karp_nodeclaims                            gauge      state       (launching, launched, registered,
                                                                   initialized, failed, deleting)
karp_quota_headroom_vcpus                  gauge      scope, quota
karp_quota_limit_vcpus                     gauge      scope, quota
karp_garbage_collected_total               counter    kind        (vm, nic, nodeclaim)
karp_disruptions_total                     counter    reason      (Empty, Expired)
karp_leader                                gauge                  (1 while this replica leads)
karp_leader_transitions_total              counter
=========================================  =========  =====================================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from provisioner.model.quota import QuotaSnapshot

__all__ = ["CLAIM_STATES", "CONTENT_TYPE", "Metrics", "Sample", "claim_state"]

CONTENT_TYPE = CONTENT_TYPE_LATEST
CLAIM_STATES = ("launching", "launched", "registered", "initialized", "failed", "deleting")
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def claim_state(conditions: Mapping[str, str], deleting: bool) -> str:
    """One word for where a NodeClaim is, from its condition statuses by type."""
    if deleting:
        return "deleting"
    if conditions.get("Launched") == "False":
        return "failed"
    if conditions.get("Initialized") == "True":
        return "initialized"
    if conditions.get("Registered") == "True":
        return "registered"
    if conditions.get("Launched") == "True":
        return "launched"
    return "launching"


@dataclass(frozen=True, slots=True)
class Sample:
    """The present, read from the controller's caches."""

    pods_pending: int = 0
    claims: Mapping[str, int] = field(default_factory=dict)  # state -> count
    quota: QuotaSnapshot | None = None
    leader: bool = False
    passes: int = 0  # provisioning passes so far
    last_pass_seconds: float = 0.0


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.pods_pending = Gauge("karp_pods_pending", "Provisionable pods waiting for a node", registry=r)
        self.pods_provisioned = Counter("karp_pods_provisioned", "Pods placed on newly created NodeClaims",
                                        registry=r)
        self.scheduling = Histogram("karp_scheduling_duration_seconds", "Duration of one provisioning pass",
                                    buckets=_BUCKETS, registry=r)
        self.created = Counter("karp_nodeclaims_created", "NodeClaims created", ["nodepool"], registry=r)
        self.launched = Counter("karp_nodeclaims_launched", "NodeClaims whose VM create succeeded", registry=r)
        self.failures = Counter("karp_nodeclaims_launch_failures", "Failed launches by Azure error code", ["code"],
                                registry=r)
        self.terminated = Counter("karp_nodeclaims_terminated", "NodeClaims deleted, by reason", ["reason"],
                                  registry=r)
        self.timeouts = Counter("karp_nodeclaims_timeouts", "Launch and registration timeouts", ["reason"],
                                registry=r)
        self.claims = Gauge("karp_nodeclaims", "NodeClaims by state", ["state"], registry=r)
        self.headroom = Gauge("karp_quota_headroom_vcpus", "vCPUs left in a quota (limit - usage - in flight)",
                              ["scope", "quota"], registry=r)
        self.limit = Gauge("karp_quota_limit_vcpus", "vCPU quota limit", ["scope", "quota"], registry=r)
        self.garbage = Counter("karp_garbage_collected", "Resources garbage collected", ["kind"], registry=r)
        self.disruptions = Counter("karp_disruptions", "Nodes disrupted, by reason", ["reason"], registry=r)
        self.leader = Gauge("karp_leader", "1 while this replica holds the leader lease", registry=r)
        self.transitions = Counter("karp_leader_transitions", "Times this replica became the leader", registry=r)
        self._passes = 0
        for state in CLAIM_STATES:
            self.claims.labels(state=state).set(0)

    # --- counters, from the log -------------------------------------------------------------
    def observe(self, rec: Mapping[str, Any]) -> None:
        """A ``LogWriter`` listener."""
        event = rec.get("event")
        if event == "plan.computed":
            self.pods_provisioned.inc(int(rec.get("pods") or 0))
        elif event == "nodeclaim.created":
            pool = rec.get("NodePool")
            self.created.labels(nodepool=str(pool.get("name", "")) if isinstance(pool, dict) else "").inc()
        elif event == "nodeclaim.launched":
            self.launched.inc()
        elif event == "nodeclaim.launch_failed" and rec.get("reason"):
            self.failures.labels(code=str(rec.get("error.code") or rec.get("reason") or "unknown")).inc()
        elif event == "nodeclaim.deleted":
            self.terminated.labels(reason=str(rec.get("reason") or "unknown").split(":")[0]).inc()
        elif event in ("nodeclaim.launch_timeout", "nodeclaim.registration_timeout"):
            self.timeouts.labels(reason=str(rec.get("reason") or "")).inc()
        elif event == "gc.vm_deleted" and rec.get("reason") == "no nodeclaim":
            self.garbage.labels(kind="vm").inc()
        elif event == "gc.nic_deleted":
            self.garbage.labels(kind="nic").inc()
        elif event == "gc.nodeclaim_deleted":
            self.garbage.labels(kind="nodeclaim").inc()
        elif event == "disruption.started":
            self.disruptions.labels(reason=str(rec.get("reason") or "")).inc()
        elif event == "leader.acquired":
            self.transitions.inc()

    # --- gauges, from a sample ----------------------------------------------------------------
    def update(self, sample: Sample) -> None:
        self.pods_pending.set(sample.pods_pending)
        for state in CLAIM_STATES:
            self.claims.labels(state=state).set(sample.claims.get(state, 0))
        self.leader.set(1 if sample.leader else 0)
        if sample.quota is not None:
            for item in sample.quota.items.values():
                labels = {"scope": item.scope, "quota": item.name}
                self.headroom.labels(**labels).set(item.headroom)
                self.limit.labels(**labels).set(item.limit)
        if sample.passes > self._passes:
            self.scheduling.observe(sample.last_pass_seconds)
            self._passes = sample.passes

    def exposition(self) -> bytes:
        """The Prometheus text format of every metric."""
        return bytes(generate_latest(self.registry))
