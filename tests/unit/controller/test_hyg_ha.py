"""Replicas: a term runs only while leading, writes stop on loss, shutdown finishes then releases."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from typing import Any

import pytest

from provisioner.controller.ha import ControllerTerm, GatedCompute, Replica
from provisioner.model.errors import CloudUnavailable
from provisioner.model.ports import NicInfo, NicSpec, VmInfo, VmSpec
from provisioner.observability.logwriter import LogWriter


class Inner:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def create_nic(self, spec: NicSpec) -> NicInfo:
        self.calls.append("create_nic")
        return NicInfo("/n", spec.name, "", {})

    def delete_nic(self, name: str) -> None:
        self.calls.append("delete_nic")

    def list_nics(self, tags: dict[str, str]) -> list[NicInfo]:
        self.calls.append("list_nics")
        return []

    def begin_create_vm(self, spec: VmSpec) -> Any:
        self.calls.append("create_vm")

    def get_vm(self, name: str) -> VmInfo | None:
        self.calls.append("get_vm")
        return None

    def delete_vm(self, name: str) -> None:
        self.calls.append("delete_vm")

    def list_vms(self, tags: dict[str, str]) -> list[VmInfo]:
        self.calls.append("list_vms")
        return []

    def read_quota(self) -> Any:
        self.calls.append("read_quota")


def test_gated_compute_refuses_every_write_when_not_leading_and_reads_still_work() -> None:
    leading = [True]
    inner = Inner()
    gated = GatedCompute(inner, lambda: leading[0])
    gated.create_nic(NicSpec("aks-a", "/subnet"))
    leading[0] = False
    for write in (lambda: gated.create_nic(NicSpec("aks-b", "/subnet")), lambda: gated.delete_nic("aks-a"),
                  lambda: gated.begin_create_vm(VmSpec("aks-b", "Standard_D2s_v5", "/n", "img")),
                  lambda: gated.delete_vm("aks-a")):
        with pytest.raises(CloudUnavailable) as caught:
            write()
        assert caught.value.code == "NotLeader"
    gated.get_vm("aks-a"), gated.list_vms({}), gated.list_nics({}), gated.read_quota()
    assert inner.calls == ["create_nic", "get_vm", "list_vms", "list_nics", "read_quota"] and gated.refused == 4


class FakeElector:
    def __init__(self) -> None:
        self.on_started_leading: Callable[[], None] | None = None
        self.on_stopped_leading: Callable[[], None] | None = None
        self.identity = "replica-a"
        self.leading = False
        self.released: list[bool] = []

    @property
    def is_leader(self) -> bool:
        return self.leading

    def start(self) -> Any:
        return self

    def lead(self) -> None:
        self.leading = True
        assert self.on_started_leading is not None
        self.on_started_leading()

    def lose(self) -> None:
        self.leading = False
        assert self.on_stopped_leading is not None
        self.on_stopped_leading()

    def stop(self, release: bool = True, timeout: float = 5.0) -> None:
        self.released.append(release)


class Term:
    def __init__(self, journal: list[str], n: int) -> None:
        self.journal = journal
        self.n = n

    def start(self) -> None:
        self.journal.append(f"start {self.n}")

    def stop(self, grace: float) -> None:
        self.journal.append(f"stop {self.n}")


def test_one_fresh_term_per_leadership_and_a_graceful_stop_releases_after_stopping() -> None:
    journal: list[str] = []
    elector = FakeElector()
    out = io.StringIO()
    made: list[Term] = []

    def make() -> Term:
        made.append(Term(journal, len(made) + 1))
        return made[-1]

    replica = Replica(elector, make, LogWriter(stream=out), grace=1.0).start()
    elector.lead()
    replica.wait_changes()
    elector.on_started_leading and elector.on_started_leading()  # a repeated callback does not start a second term
    replica.wait_changes()
    assert journal == ["start 1"] and replica.terms == 1
    elector.lose()
    replica.wait_changes()
    elector.lead()
    replica.wait_changes()
    assert journal == ["start 1", "stop 1", "start 2"]
    replica.stop()
    assert journal[-1] == "stop 2" and elector.released == [True]
    assert '"event":"leader.lost"' in out.getvalue() and out.getvalue().count('"leader.acquired"') == 2


def test_controller_term_stops_upkeep_before_the_controller_and_bounds_the_wait() -> None:
    journal: list[str] = []
    gate = threading.Event()

    class Controller:
        def start(self) -> None:
            journal.append("controller start")

        def stop(self) -> None:
            journal.append("controller stop")
            gate.wait(5)  # a launch that does not finish in time

    class Upkeep:
        def start(self) -> Any:
            journal.append("upkeep start")

        def stop(self, timeout: float = 10.0) -> None:
            journal.append("upkeep stop")

    term = ControllerTerm(Controller(), Upkeep())
    term.start()
    term.stop(grace=0.1)  # returns after the grace even though the controller is still stopping
    gate.set()
    assert journal == ["controller start", "upkeep start", "upkeep stop", "controller stop"]
