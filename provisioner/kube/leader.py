"""Leader election on a coordination.k8s.io/v1 Lease, and the gate that stops writes.

Only one replica may write. ``LeaderElector`` competes for a Lease with plain
get/create/replace calls whose ``metadata.resourceVersion`` makes every write
conditional (a 409 means someone else wrote first). Like client-go it judges
expiry by its own clock: a holder's lease is expired when its record has not
changed for ``lease_duration`` seconds of local time. The leader renews every
``retry_period``; if it cannot renew within ``renew_deadline`` it steps down.

``LeaderGate`` is what writers check: it is open only while leadership is held
*and* the last successful renewal is younger than ``renew_deadline``, so a lost or
stalled lease stops all writes at once, even before the elector thread notices.
On ``stop()`` the leader releases the Lease (empty holder) so a standby takes over
without waiting for expiry.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from provisioner.kube.connection import LEASES, RawApi
from provisioner.model.kube_port import Conflict, KubeError, NotFound, NotLeader

__all__ = ["LeaderElector", "LeaderGate"]

Obj = dict[str, Any]
log = logging.getLogger(__name__)


def _micro(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderGate:
    """Open while this replica leads; ``check()`` raises ``NotLeader`` otherwise."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._valid_until = 0.0
        self._leading = False
        self._lock = threading.Lock()
        self.identity = ""

    def grant(self, valid_for: float) -> None:
        with self._lock:
            self._leading = True
            self._valid_until = self._clock() + valid_for

    def revoke(self) -> None:
        with self._lock:
            self._leading = False
            self._valid_until = 0.0

    @property
    def is_leader(self) -> bool:
        with self._lock:
            return self._leading and self._clock() < self._valid_until

    def check(self, action: str = "write") -> None:
        if not self.is_leader:
            raise NotLeader(f"not the leader: refusing to {action} (identity {self.identity or 'unknown'})")


class LeaderElector:
    def __init__(self, raw: RawApi, *, name: str = "karp-leader-election", namespace: str = "karpenter",
                 identity: str | None = None, lease_duration: float = 15.0, renew_deadline: float = 10.0,
                 retry_period: float = 2.0, gate: LeaderGate | None = None,
                 on_started_leading: Callable[[], None] | None = None, on_stopped_leading: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not lease_duration > renew_deadline > retry_period > 0:
            raise ValueError("leader election needs lease_duration > renew_deadline > retry_period > 0")
        self.raw = raw
        self.name = name
        self.namespace = namespace
        self.identity = identity or f"{socket.gethostname()}_{random.getrandbits(32):08x}"
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.gate = gate or LeaderGate(clock)
        self.gate.identity = self.identity
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.clock = clock
        self._observed: tuple[str, str] = ("", "")
        self._observed_at = 0.0
        self._expires_at = 0.0  # when the lease seen last lapses, on this replica's clock
        self._last_renew = 0.0
        self._leading = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.transitions = 0

    @property
    def is_leader(self) -> bool:
        return self.gate.is_leader

    # ---- lifecycle ------------------------------------------------------------------------------
    def start(self) -> LeaderElector:
        self._thread = threading.Thread(target=self._run, name=f"leader-{self.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self, release: bool = True, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self._leading:
            self._step_down()
            if release:
                self.release()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                ok = self.try_acquire_or_renew()
            except Exception as e:  # an unexpected answer must not kill the elector
                log.warning("leader election: attempt failed: %s", e)
                ok = False
            now = self.clock()
            if ok:
                self._last_renew = now
                self.gate.grant(self.renew_deadline)
                if not self._leading:
                    self._leading = True
                    log.info("leader election: %s became the leader of %s/%s", self.identity, self.namespace, self.name)
                    if self.on_started_leading:
                        self.on_started_leading()
            elif self._leading and now - self._last_renew >= self.renew_deadline:
                self._step_down()
            jitter = 1.0 if self._leading else 1.0 + random.random() * 0.2
            wait = self.retry_period * jitter
            if not self._leading and self._expires_at > now:  # a standby tries again the moment the lease lapses
                wait = min(wait, self._expires_at - now + 0.01)
            self._stop.wait(wait)

    def _step_down(self) -> None:
        self.gate.revoke()
        if self._leading:
            self._leading = False
            log.warning("leader election: %s lost the lease %s/%s", self.identity, self.namespace, self.name)
            if self.on_stopped_leading:
                self.on_stopped_leading()

    # ---- one attempt --------------------------------------------------------------------------------
    def try_acquire_or_renew(self) -> bool:
        """One attempt to take or keep the Lease; True when this replica holds it now."""
        now_wall = datetime.now(UTC)
        path = LEASES.path(self.namespace, self.name)
        try:
            lease = self.raw.call("GET", path)
        except NotFound:
            spec0 = self._spec(now_wall, acquire=True, transitions=0)
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace}, "spec": spec0}
            try:
                self.raw.call("POST", LEASES.path(self.namespace), body=body)
            except KubeError as e:
                log.debug("leader election: create lost: %s", e)
                return False
            self._observe(spec0)
            return True
        except KubeError as e:
            log.warning("leader election: cannot read lease %s/%s: %s", self.namespace, self.name, e)
            return False
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        self._observe(spec)
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        self._expires_at = self._observed_at + duration
        if holder and holder != self.identity and self.clock() < self._expires_at:
            return False
        transitions = int(spec.get("leaseTransitions") or 0)
        if holder != self.identity:
            transitions += 1
        new_spec = self._spec(now_wall, acquire=holder != self.identity, transitions=transitions)
        if holder == self.identity:
            new_spec["acquireTime"] = spec.get("acquireTime") or new_spec["acquireTime"]
        lease["spec"] = new_spec
        try:
            self.raw.call("PUT", path, body=lease)
        except Conflict:
            return False
        except KubeError as e:
            log.warning("leader election: cannot update lease %s/%s: %s", self.namespace, self.name, e)
            return False
        if holder != self.identity:
            self.transitions += 1
        self._observe(new_spec)
        return True

    def _spec(self, now: datetime, *, acquire: bool, transitions: int) -> Obj:
        return {"holderIdentity": self.identity, "leaseDurationSeconds": round(self.lease_duration),
                "acquireTime": _micro(now), "renewTime": _micro(now), "leaseTransitions": transitions}

    def _observe(self, spec: Obj) -> None:
        record = (str(spec.get("holderIdentity") or ""), str(spec.get("renewTime") or ""))
        if record != self._observed:
            self._observed = record
            self._observed_at = self.clock()

    def release(self) -> bool:
        """Give the Lease up (empty holder, 1 s duration) so a standby takes over at once."""
        path = LEASES.path(self.namespace, self.name)
        try:
            lease = self.raw.call("GET", path)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.identity:
                return False
            now = _micro(datetime.now(UTC))
            lease["spec"] = {**spec, "holderIdentity": "", "leaseDurationSeconds": 1, "renewTime": now, "acquireTime": now}
            self.raw.call("PUT", path, body=lease)
            return True
        except KubeError as e:
            log.warning("leader election: could not release lease %s/%s: %s", self.namespace, self.name, e)
            return False
