"""Small fakes of the Compute port for the controller's unit tests."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from provisioner.model.errors import CloudError
from provisioner.model.instance_type import InstanceType, Offering
from provisioner.model.ports import NicInfo, NicSpec, VmInfo, VmSpec
from provisioner.model.quota import QuotaSnapshot, QuotaUsage


class FakeClock:
    def __init__(self) -> None:
        self.moment = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


class Done:
    def __init__(self, value: VmInfo | None = None, error: CloudError | None = None) -> None:
        self.value = value
        self.error = error

    def done(self) -> bool:
        return True

    def result(self) -> VmInfo:
        if self.error is not None:
            raise self.error
        assert self.value is not None
        return self.value


@dataclass
class FakeCompute:
    """Records calls; ``fail_vm`` maps a VM size to an error raised by its create."""

    nics: dict[str, NicInfo] = field(default_factory=dict)
    vms: dict[str, VmInfo] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    fail_vm: dict[str, CloudError] = field(default_factory=dict)
    leave_failed_vm: bool = False
    quota: dict[str, tuple[int, int]] = field(default_factory=lambda: {"cores": (20, 14)})
    lock: threading.Lock = field(default_factory=threading.Lock)

    def create_nic(self, spec: NicSpec) -> NicInfo:
        with self.lock:
            self.calls.append(f"create_nic {spec.name}")
            nic = NicInfo(id=f"/nics/{spec.name}", name=spec.name, private_ip="10.0.0.4", tags=dict(spec.tags))
            self.nics[spec.name] = nic
            return nic

    def delete_nic(self, name: str) -> None:
        with self.lock:
            self.calls.append(f"delete_nic {name}")
            self.nics.pop(name, None)

    def list_nics(self, tags: dict[str, str]) -> list[NicInfo]:
        return list(self.nics.values())

    def begin_create_vm(self, spec: VmSpec) -> Any:
        with self.lock:
            self.calls.append(f"create_vm {spec.name} {spec.size}")
            error = self.fail_vm.get(spec.size)
            if error is not None:
                if self.leave_failed_vm:
                    self.vms[spec.name] = VmInfo(f"/vms/{spec.name}", spec.name, spec.size, spec.zone, spec.spot,
                                                 "Failed", dict(spec.tags))
                return Done(error=error)
            vm = VmInfo(f"/vms/{spec.name}", spec.name, spec.size, spec.zone, spec.spot, "Succeeded", dict(spec.tags))
            self.vms[spec.name] = vm
            return Done(vm)

    def get_vm(self, name: str) -> VmInfo | None:
        with self.lock:
            self.calls.append(f"get_vm {name}")
            return self.vms.get(name)

    def delete_vm(self, name: str) -> None:
        with self.lock:
            self.calls.append(f"delete_vm {name}")
            self.vms.pop(name, None)

    def list_vms(self, tags: dict[str, str]) -> list[VmInfo]:
        return list(self.vms.values())

    def read_quota(self) -> QuotaSnapshot:
        with self.lock:
            self.calls.append("read_quota")
            items = {n: QuotaUsage(n, lim, use) for n, (lim, use) in self.quota.items()}
        return QuotaSnapshot("westus2", datetime(2026, 11, 29, tzinfo=UTC), "azure", items)


def make_type(name: str, vcpus: int, family: str = "standardDLSv5Family", zones: tuple[str, ...] = ("1", "2", "3"),
              spot: bool = True) -> InstanceType:
    offerings = [Offering("on-demand", z, 0.05 * vcpus) for z in zones]
    if spot:
        offerings += [Offering("spot", z, 0.01 * vcpus) for z in zones]
    return InstanceType(name, vcpus, vcpus * 2048, family, "westus2", zones, 0.05 * vcpus, 0.01 * vcpus,
                        offerings=tuple(offerings))


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def compute() -> FakeCompute:
    return FakeCompute()


@pytest.fixture
def instance_type() -> Any:
    return make_type


class FakeCluster:
    """An in-memory ClusterPort."""

    def __init__(self) -> None:
        from provisioner.controller.cluster import ClusterView

        self.view_value = ClusterView((), (), (), (), (), ())
        self.claims: dict[str, Any] = {}
        self.deleted: list[str] = []
        self.patches: list[tuple[str, dict[str, str], list[str]]] = []
        self.events: list[tuple[str, str, str, str, str, str]] = []

    def view(self) -> Any:
        from dataclasses import replace

        return replace(self.view_value, claims=tuple(self.claims.values()))

    def pending_keys(self) -> list[str]:
        return [p.key for p in self.view_value.pending]

    def create_nodeclaim(self, claim: Any, requirements: Any, taints: Any, node_class: str) -> None:
        self.claims[claim.name] = claim

    def update_nodeclaim_status(self, claim: Any) -> None:
        self.claims[claim.name] = claim

    def delete_nodeclaim(self, name: str) -> None:
        self.claims.pop(name, None)
        self.deleted.append(name)

    def patch_node(self, name: str, labels: dict[str, str], remove_taints: list[str]) -> None:
        self.patches.append((name, labels, remove_taints))

    def event(self, kind: str, namespace: str, name: str, type_: str, reason: str, message: str) -> None:
        self.events.append((kind, namespace, name, type_, reason, message))


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster()
