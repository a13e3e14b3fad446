"""A NodeClaim's life after the plan: launched or failed, then registered and initialised.

- ``launched(result)`` runs on the launch worker when a create ends. Success: the claim
  records its ``providerID`` and ``Launched=True``. Failure: ``Launched=False`` with
  Karpenter's reason (``SubscriptionQuotaReached``, ``SKUNotAvailable``,
  ``ZonalAllocationFailure``…) and Azure's message; Warnings name the cause; the claim is
  deleted after a short linger (so the reason can be read) and a new planning pass is asked
  for, which plans without the offerings the error marked unavailable.
- ``tick()`` runs periodically: claims whose Node appeared are registered (labels synced,
  ``karpenter.sh/unregistered`` taint removed) and initialised once the Node is Ready.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from provisioner.controller.cluster import ClusterPort, ClusterView
from provisioner.controller.conditions import set_condition
from provisioner.controller.launch import LaunchResult
from provisioner.controller.provisioning import Provisioner
from provisioner.controller.registration import NodeObservation, registration_step
from provisioner.controller.reporting import Reporter
from provisioner.observability.logwriter import LogWriter

__all__ = ["Lifecycle"]


class Lifecycle:
    def __init__(
        self,
        cluster: ClusterPort,
        provisioner: Provisioner,
        reporter: Reporter,
        log: LogWriter,
        clock: Callable[[], datetime],
        replan: Callable[[], None],
        failed_linger: float = 5.0,
    ) -> None:
        self._cluster = cluster
        self._provisioner = provisioner
        self._reporter = reporter
        self._log = log
        self._clock = clock
        self._replan = replan
        self._linger = failed_linger
        self.launched_ok = 0
        self.launch_failures = 0

    def launched(self, result: LaunchResult) -> None:
        claim = result.request.claim
        record = self._provisioner.record(claim)
        if record is None:
            return
        now = self._clock()
        if result.ok and result.vm is not None:
            conditions, transitions = set_condition(list(record.conditions), "Launched", "True", "Launched", "", now)
            record = replace(record, provider_id=result.vm.provider_id, conditions=tuple(conditions),
                             launched_at=result.finished_at or now,
                             zone=result.vm.zone or record.zone)
            self.launched_ok += 1
        else:
            reason = result.reason
            message = str(result.error) if result.error is not None else "launch failed"
            conditions, transitions = set_condition(list(record.conditions), "Launched", "False", reason, message, now)
            record = replace(record, conditions=tuple(conditions))
            self.launch_failures += 1
            self._provisioner.mark_failed(claim)
            with_pods = list(self._provisioner.claim_pods.get(claim, ()))
            self._reporter.launch_failed(result, with_pods)
        self._provisioner.store(record)
        try:
            self._cluster.update_nodeclaim_status(record)
        except Exception as e:
            self._log.log("controller.error", step="nodeclaim status", NodeClaim={"name": claim}, error=str(e))
        self._reporter.transitions(claim, transitions)
        if not result.ok:
            self._replan()

    def tick(self, view: ClusterView | None = None) -> None:
        """Register and initialise launched claims; delete failed ones whose linger is over."""
        for name in self._provisioner.forget_failed(self._linger):
            try:
                self._cluster.delete_nodeclaim(name)
                self._log.log("nodeclaim.deleted", name=name, reason="launch failed")
            except Exception as e:
                self._log.log("controller.error", step="nodeclaim delete", NodeClaim={"name": name}, error=str(e))
        pending = [r for r in list(self._provisioner.records.values())
                   if r.status_of("Launched") == "True" and r.status_of("Initialized") != "True"]
        if not pending:
            return
        view = view or self._cluster.view()
        by_provider = {n.provider_id.lower(): n for n in view.nodes if n.provider_id}
        for record in pending:
            node = by_provider.get(record.provider_id.lower())
            if node is None:
                continue
            observation = NodeObservation(node.node.name, node.provider_id, node.node.ready, node.node.label_map,
                                          node.raw_taints)
            pool = next((p for p in view.nodepools if p.name == record.nodepool), None)
            startup = tuple(t.key for t in pool.startup_taints) if pool else ()
            step = registration_step(list(record.conditions), observation, record.labels, startup, self._clock())
            if step.patch is not None:
                self._cluster.patch_node(step.patch.node, step.patch.labels, step.patch.remove_taints)
            if not step.transitions:
                continue
            record = replace(record, conditions=tuple(step.conditions), node_name=node.node.name)
            self._provisioner.store(record)
            self._cluster.update_nodeclaim_status(record)
            self._reporter.transitions(record.name, step.transitions)
            if step.registered_now:
                self._log.log("nodeclaim.registered", name=record.name, Node={"name": node.node.name})
            if step.initialized_now:
                self._log.log("nodeclaim.initialized", name=record.name, Node={"name": node.node.name},
                              allocatable=node.node.allocatable.to_requests())
