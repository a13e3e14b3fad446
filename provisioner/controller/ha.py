"""High availability: several replicas, one leader, and a clean hand-over.

Every replica runs a ``LeaderElector`` (``provisioner.kube.leader``) on the same Lease. Only
the leader runs a *term*: a controller (provisioning, launch, registration) and its
upkeep (recovery, liveness, garbage collection, disruption), built fresh for each term so
nothing from an earlier term leaks into the next. A standby takes over when the Lease
expires (within ``lease_duration``) or at once when the leader releases it.

Writes stop the moment leadership is lost, before any thread notices: Kubernetes writes go
through a ``KubeCluster`` whose ``LeaderGate`` refuses them (``NotLeader``), and Azure
writes through ``GatedCompute``, which asks the same gate before every create and delete
(``CloudUnavailable("NotLeader")``). Reads stay open, so a standby's caches are warm.

Shutdown (SIGTERM): ``Replica.stop(grace)`` stops planning, lets in-flight launches finish
(up to ``grace`` seconds; one that does not finish is adopted or cleaned by the next
leader's recovery), stops upkeep, then releases the Lease so a standby starts at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from provisioner.model.errors import CloudUnavailable
from provisioner.model.ports import Compute, NicInfo, NicSpec, VmInfo, VmSpec
from provisioner.model.quota import QuotaSnapshot
from provisioner.observability.logwriter import LogWriter

__all__ = ["ControllerTerm", "Elector", "GatedCompute", "Replica", "Term"]


class GatedCompute:
    """``Compute`` whose creates and deletes are refused unless ``allowed()`` (the leader gate) says yes."""

    def __init__(self, inner: Compute, allowed: Callable[[], bool]) -> None:
        self.inner = inner
        self.allowed = allowed
        self.refused = 0

    def _check(self, action: str) -> None:
        if not self.allowed():
            self.refused += 1
            raise CloudUnavailable("NotLeader", f"not the leader: refusing to {action}")

    def create_nic(self, spec: NicSpec) -> NicInfo:
        self._check(f"create network interface {spec.name}")
        return self.inner.create_nic(spec)

    def delete_nic(self, name: str) -> None:
        self._check(f"delete network interface {name}")
        self.inner.delete_nic(name)

    def list_nics(self, tags: dict[str, str]) -> list[NicInfo]:
        return self.inner.list_nics(tags)

    def begin_create_vm(self, spec: VmSpec) -> Any:
        self._check(f"create virtual machine {spec.name}")
        return self.inner.begin_create_vm(spec)

    def get_vm(self, name: str) -> VmInfo | None:
        return self.inner.get_vm(name)

    def delete_vm(self, name: str) -> None:
        self._check(f"delete virtual machine {name}")
        self.inner.delete_vm(name)

    def list_vms(self, tags: dict[str, str]) -> list[VmInfo]:
        return self.inner.list_vms(tags)

    def read_quota(self) -> QuotaSnapshot:
        return self.inner.read_quota()


class Term(Protocol):
    """What runs while this replica leads."""

    def start(self) -> None: ...

    def stop(self, grace: float) -> None: ...


class _Controller(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


class _Upkeep(Protocol):
    def start(self) -> Any: ...

    def stop(self, timeout: float = 10.0) -> None: ...


class ControllerTerm:
    """A controller and its upkeep, started together and stopped in order (upkeep, then launches)."""

    def __init__(self, controller: _Controller, upkeep: _Upkeep | None = None) -> None:
        self.controller = controller
        self.upkeep = upkeep

    def start(self) -> None:
        self.controller.start()
        if self.upkeep is not None:
            self.upkeep.start()

    def stop(self, grace: float) -> None:
        if self.upkeep is not None:
            self.upkeep.stop(timeout=grace)
        stopper = threading.Thread(target=self.controller.stop, name="karp-term-stop", daemon=True)
        stopper.start()
        stopper.join(grace)  # launches still running after ``grace`` are left to the next leader


class Elector(Protocol):
    on_started_leading: Callable[[], None] | None
    on_stopped_leading: Callable[[], None] | None
    identity: str

    @property
    def is_leader(self) -> bool: ...

    def start(self) -> Any: ...

    def stop(self, release: bool = True, timeout: float = 5.0) -> None: ...


class Replica:
    """Runs ``make_term()`` while ``elector`` holds the Lease; one term at a time."""

    def __init__(self, elector: Elector, make_term: Callable[[], Term], log: LogWriter, grace: float = 30.0,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.elector = elector
        self.make_term = make_term
        self.log = log
        self.grace = grace
        self.monotonic = monotonic
        self.term: Term | None = None
        self.terms = 0
        self.led_since: float | None = None
        self._lock = threading.Lock()
        self._changes: list[threading.Thread] = []
        elector.on_started_leading = self._started
        elector.on_stopped_leading = self._stopped

    @property
    def identity(self) -> str:
        return self.elector.identity

    @property
    def is_leader(self) -> bool:
        return self.elector.is_leader

    def start(self) -> Replica:
        self.elector.start()
        return self

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        with self._lock:
            self._changes = [t for t in self._changes if t.is_alive()] + [thread]
        thread.start()

    def _started(self) -> None:
        self._spawn(self._begin, "karp-term-start")

    def _stopped(self) -> None:
        self.log.log("leader.lost", identity=self.identity)
        self._spawn(lambda: self._end(self.grace), "karp-term-stop")

    def _begin(self) -> None:
        with self._lock:
            if self.term is not None or not self.elector.is_leader:
                return
            term = self.make_term()
            self.term = term
            self.terms += 1
            self.led_since = self.monotonic()
        self.log.log("leader.acquired", identity=self.identity)
        term.start()

    def _end(self, grace: float) -> None:
        with self._lock:
            term, self.term = self.term, None
            self.led_since = None
        if term is not None:
            term.stop(grace)

    def wait_changes(self, timeout: float = 10.0) -> None:
        """Wait for pending term starts and stops (tests, shutdown)."""
        deadline = self.monotonic() + timeout
        with self._lock:
            changes = list(self._changes)
        for thread in changes:
            thread.join(max(0.0, deadline - self.monotonic()))

    def stop(self, grace: float | None = None) -> None:
        """Graceful: finish in-flight launches (up to ``grace``), then release the Lease."""
        self.wait_changes(5.0)
        self._end(self.grace if grace is None else grace)
        self.elector.on_stopped_leading = None
        self.elector.stop(release=True)
