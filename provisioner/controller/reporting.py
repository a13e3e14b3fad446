"""Saying what happened: log lines and Kubernetes Events from the same facts.

- ``Nominated`` (Normal) on a pod: "Pod should schedule on: nodeclaim/X";
- pods that cannot be placed: a ``quota.blocked`` / ``nodepool.limit_reached`` /
  ``pod.unschedulable`` log line, and Warning Events on each pod (``FailedScheduling``, with
  Karpenter's "Failed to schedule pod, …" wording) and on the NodePool (``QuotaExceeded``,
  ``NodePoolLimitReached``) naming the blocking quota, its numbers and the limit that would
  unblock them;
- a failed launch: a Warning on the NodeClaim (``InsufficientCapacityError`` wording, the
  condition reason and Azure's message), and for a quota refusal on its NodePool too;
- condition transitions on NodeClaims (Normal, reason = the condition type).

Events are deduplicated for two minutes per object, reason and message, as Karpenter does;
repeated identical blocked log lines are written once until the situation changes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from provisioner.controller.conditions import Transition
from provisioner.controller.decisions import Blocked
from provisioner.controller.launch import LaunchResult, launch_reason
from provisioner.model.errors import QuotaExceeded, describe_quota_block
from provisioner.model.pod import Pod
from provisioner.observability.logwriter import LogWriter

__all__ = ["DEDUP", "EventSink", "Reporter"]

DEDUP = timedelta(minutes=2)
EventSink = Callable[[str, str, str, str, str, str], None]  # kind, namespace, name, type, reason, message


def _names(pods: tuple[Pod, ...] | list[Pod], shown: int = 5) -> str:
    keys = [p.key for p in pods]
    if len(keys) <= shown:
        return ", ".join(keys)
    return ", ".join(keys[:shown]) + f" and {len(keys) - shown} other(s)"


class Reporter:
    def __init__(self, log: LogWriter, sink: EventSink, clock: Callable[[], datetime]) -> None:
        self._log = log
        self._sink = sink
        self._clock = clock
        self._sent: dict[tuple[str, str, str, str, str], datetime] = {}
        self._last_blocked: tuple[object, ...] = ()
        self._lock = threading.Lock()
        self.events_sent = 0

    def event(self, kind: str, namespace: str, name: str, type_: str, reason: str, message: str) -> bool:
        """Send one Event unless the same one went out less than two minutes ago."""
        key = (kind, namespace, name, reason, message)
        now = self._clock()
        with self._lock:
            last = self._sent.get(key)
            if last is not None and now - last < DEDUP:
                return False
            self._sent[key] = now
            self.events_sent += 1
        try:
            self._sink(kind, namespace, name, type_, reason, message)
        except Exception as e:  # an Event is best effort; the log line is the record
            self._log.log("event.not_recorded", error=str(e), reason=reason, kind=kind, object=name)
        return True

    def nominated(self, pod: Pod, target: str) -> None:
        self.event("Pod", pod.namespace, pod.name, "Normal", "Nominated", f"Pod should schedule on: {target}")

    def blocked(self, groups: list[Blocked]) -> None:
        signature = tuple((b.reason, tuple(p.key for p in b.pods)) for b in groups)
        with self._lock:
            repeat = signature == self._last_blocked
            self._last_blocked = signature
        for group in groups:
            if not repeat:
                self._log_blocked(group)
            for pod in group.pods:
                self.event("Pod", pod.namespace, pod.name, "Warning", "FailedScheduling",
                           f"Failed to schedule pod, {group.reason}")
            if group.nodepool:
                reason = "QuotaExceeded" if group.quota else (
                    "NodePoolLimitReached" if group.nodepool_limit else "FailedScheduling")
                self.event("NodePool", "", group.nodepool, "Warning", reason,
                           f"{len(group.pods)} pod(s) cannot be placed: {group.reason}")

    def _log_blocked(self, group: Blocked) -> None:
        pods = _names(group.pods)
        if group.quota is not None:
            self._log.log("quota.blocked", name=group.nodepool, message=f"quota blocks pod(s): {group.reason}",
                          Pods=pods, pods=len(group.pods), quota=group.quota.as_fields(), error=group.reason,
                          **{"error.code": f"{group.quota.scope}-vcpu-quota"})
        elif group.nodepool_limit:
            self._log.log("nodepool.limit_reached", name=group.nodepool, Pods=pods, pods=len(group.pods),
                          error=group.reason)
        else:
            self._log.log("pod.unschedulable", name=group.pods[0].name if group.pods else "",
                          namespace=group.pods[0].namespace if group.pods else "", Pods=pods,
                          pods=len(group.pods), error=group.reason)

    def launch_failed(self, result: LaunchResult, pods: list[Pod]) -> None:
        error = result.error
        claim = result.request.claim
        text = str(error) if error is not None else "launch failed"
        if isinstance(error, QuotaExceeded):
            text = describe_quota_block(
                error.scope, error.quota, error.region, error.limit, error.usage, error.required, error.new_limit,
                size=result.request.instance_type.name, would="allow it",
            ) + f" ({error.code})"
            self.event("NodePool", "", result.request.nodepool, "Warning", "QuotaExceeded",
                       f"NodeClaim {claim} refused by Azure: {text}")
            for pod in pods:
                self.event("Pod", pod.namespace, pod.name, "Warning", "FailedScheduling",
                           f"Failed to schedule pod, {text}")
        self.event("NodeClaim", "", claim, "Warning", "InsufficientCapacityError" if error else "LaunchFailed",
                   f"NodeClaim {claim} event: {launch_reason(error)}: {text}")

    def transitions(self, claim: str, transitions: list[Transition]) -> None:
        for t in transitions:
            self.event("NodeClaim", "", claim, "Normal", t.type, t.event_message)
