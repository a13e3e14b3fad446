"""What the emulator holds: one node resource group with a subnet, NICs, VMs and operations.

Every write that Azure runs as a long-running operation (VM and NIC create and delete)
becomes an ``Operation`` with a due time; it reads ``InProgress`` until then and settles
(``Succeeded`` or ``Failed``) when it is next looked at or when the emulator's clock thread
reaches it. A VM is charged against quota from its PUT until it is gone, unless it
``Failed``. All methods are called under the emulator's lock; the callbacks that
``settle`` returns (the VM hooks) are run by the caller after releasing it.
"""

from __future__ import annotations

import ipaddress
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from provisioner.model.ports import VmInfo
from sim.arm import messages
from sim.arm.ledger import QuotaLedger, VcpuCharge
from sim.arm.messages import ArmFault

__all__ = ["ArmState", "Nic", "Operation", "Timings", "Vm", "resource_tags"]

VmHook = Callable[[VmInfo], None]


@dataclass(frozen=True, slots=True)
class Timings:
    """Delays of the long-running operations and reservations, in seconds."""

    vm_create_s: float = 0.0
    vm_delete_s: float = 0.0
    nic_s: float = 0.0
    nic_reservation_s: float = 0.0  # Azure holds a deleted VM's NIC for 180 s; 0 turns it off


@dataclass(slots=True)
class Nic:
    name: str
    id: str
    private_ip: str
    subnet_id: str
    tags: dict[str, str]
    body: dict[str, Any]
    vm_id: str = ""
    reserved_for: str = ""
    reserved_until: float = 0.0
    state: str = "Succeeded"


@dataclass(slots=True)
class Vm:
    name: str
    id: str
    size: str
    zone: str
    spot: bool
    tags: dict[str, str]
    nic_ids: tuple[str, ...]
    body: dict[str, Any]
    charge: VcpuCharge
    created_at: datetime
    vm_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    state: str = "Creating"  # Creating | Succeeded | Failed | Deleting

    def info(self) -> VmInfo:
        return VmInfo(self.id, self.name, self.size, self.zone, self.spot, self.state, dict(self.tags), self.created_at)


@dataclass(slots=True)
class Operation:
    id: str
    kind: str  # create_vm | delete_vm | create_nic | delete_nic
    target: str
    provider: str  # Microsoft.Compute | Microsoft.Network
    due: float
    started: datetime
    failure: ArmFault | None = None
    status: str = "InProgress"
    ended: datetime | None = None


class ArmState:
    def __init__(
        self,
        subscription: str,
        resource_group: str,
        location: str,
        ledger: QuotaLedger,
        subnet_prefix: str = "10.224.0.0/16",
        timings: Timings | None = None,
    ) -> None:
        self.subscription = subscription
        self.resource_group = resource_group
        self.location = location
        self.ledger = ledger
        self.timings = timings or Timings()
        self.subnet = ipaddress.ip_network(subnet_prefix)
        group = f"/subscriptions/{subscription}/resourceGroups/{resource_group}"
        self.group_id = group
        self.vnet_id = f"{group}/providers/Microsoft.Network/virtualNetworks/aks-vnet"
        self.subnet_id = f"{self.vnet_id}/subnets/aks-subnet"
        self.nics: dict[str, Nic] = {}
        self.vms: dict[str, Vm] = {}
        self.operations: dict[str, Operation] = {}
        self.pending: dict[str, Operation] = {}  # the operations still InProgress
        self._used_ips: set[int] = set()
        self.vm_created_hooks: list[VmHook] = []
        self.vm_deleted_hooks: list[VmHook] = []

    # --- ids -------------------------------------------------------------------------
    def vm_resource_id(self, name: str) -> str:
        return f"{self.group_id}/providers/Microsoft.Compute/virtualMachines/{name}"

    def nic_resource_id(self, name: str) -> str:
        return f"{self.group_id}/providers/Microsoft.Network/networkInterfaces/{name}"

    def charges(self) -> list[VcpuCharge]:
        return [vm.charge for vm in self.vms.values() if vm.state != "Failed"]

    def usage(self) -> dict[str, int]:
        return self.ledger.usage(self.charges())

    # --- operations ------------------------------------------------------------------
    def start_operation(self, kind: str, target: str, provider: str, delay: float, now: float,
                        failure: ArmFault | None = None) -> Operation:
        op = Operation(str(uuid.uuid4()), kind, target, provider, now + delay, datetime.now(UTC), failure)
        self.operations[op.id] = op
        self.pending[op.id] = op
        return op

    def settle(self, now: float) -> list[Callable[[], None]]:
        """Finish every operation whose time has come; returns the hook calls to make."""
        calls: list[Callable[[], None]] = []
        self.ledger.settle(now)
        for op in [op for op in self.pending.values() if op.due <= now]:
            calls.extend(self._finish(op, now))
        return calls

    def _finish(self, op: Operation, now: float) -> list[Callable[[], None]]:
        self.pending.pop(op.id, None)
        op.status = "Failed" if op.failure else "Succeeded"
        op.ended = datetime.now(UTC)
        calls: list[Callable[[], None]] = []
        if op.kind == "create_vm":
            vm = self.vms.get(op.target)
            if vm is not None and vm.state == "Creating":
                vm.state = "Failed" if op.failure else "Succeeded"
                if op.failure:  # a VM whose allocation failed holds neither quota nor its NIC
                    for nic in self.nics.values():
                        if nic.vm_id.lower() == vm.id.lower():
                            nic.vm_id = ""
                else:
                    info = vm.info()
                    calls.extend(_bind(hook, info) for hook in self.vm_created_hooks)
        elif op.kind == "delete_vm":
            vm = self.vms.pop(op.target, None)
            if vm is not None:
                for nic in self.nics.values():
                    if nic.vm_id.lower() == vm.id.lower():
                        nic.vm_id = ""
                        if self.timings.nic_reservation_s > 0:
                            nic.reserved_for = vm.id
                            nic.reserved_until = now + self.timings.nic_reservation_s
                info = vm.info()
                calls.extend(_bind(hook, info) for hook in self.vm_deleted_hooks)
        elif op.kind == "delete_nic":
            gone = self.nics.pop(op.target, None)
            if gone is not None:
                self._used_ips.discard(int(ipaddress.ip_address(gone.private_ip)))
        elif op.kind == "create_nic":
            created = self.nics.get(op.target)
            if created is not None:
                created.state = "Succeeded"
        return calls

    # --- NICs ------------------------------------------------------------------------
    def release_ips(self) -> None:
        self._used_ips = {int(ipaddress.ip_address(n.private_ip)) for n in self.nics.values()}

    def allocate_ip(self) -> str:
        """The lowest free address; Azure keeps the first four and the last one of a subnet."""
        first = int(self.subnet.network_address) + 4
        last = int(self.subnet.broadcast_address) - 1
        for candidate in range(first, last + 1):
            if candidate not in self._used_ips:
                self._used_ips.add(candidate)
                return str(ipaddress.ip_address(candidate))
        raise messages.subnet_full(self.subnet_id, str(self.subnet))

    def put_nic(self, name: str, body: dict[str, Any], now: float) -> tuple[int, Nic, Operation | None]:
        props = body.get("properties") or {}
        configs = props.get("ipConfigurations") or []
        if not isinstance(configs, list) or not configs:
            raise messages.bad_request(
                "InvalidRequestFormat", "Cannot parse the request: property 'ipConfigurations' is required."
            )
        subnet_id = str(((configs[0].get("properties") or {}).get("subnet") or {}).get("id") or "")
        if subnet_id.lower() != self.subnet_id.lower():
            raise ArmFault(
                400,
                "InvalidResourceReference",
                f"Resource {subnet_id or '(none)'} referenced by resource {self.nic_resource_id(name)} was not "
                "found. Please make sure that the referenced resource exists, and that both resources are in "
                "the same region.",
            )
        tags = resource_tags(body)
        existing = self.nics.get(name)
        if existing is not None:
            existing.tags = tags
            existing.body = body
            return 200, existing, None
        ip = self.allocate_ip()
        nic = Nic(name, self.nic_resource_id(name), ip, self.subnet_id, tags, body, state="Updating")
        self.nics[name] = nic
        op = self.start_operation("create_nic", name, "Microsoft.Network", self.timings.nic_s, now)
        if self.timings.nic_s <= 0:
            self._finish(op, now)
        return 201, nic, op

    def delete_nic(self, name: str, now: float) -> Operation | None:
        nic = self.nics.get(name)
        if nic is None:
            return None
        if nic.vm_id:
            raise messages.nic_in_use(nic.id, nic.vm_id)
        nic.state = "Deleting"
        op = self.start_operation("delete_nic", name, "Microsoft.Network", self.timings.nic_s, now)
        if self.timings.nic_s <= 0:
            self._finish(op, now)
        return op

    # --- VMs -------------------------------------------------------------------------
    def attach(self, vm: Vm, now: float) -> None:
        for nic_id in vm.nic_ids:
            nic = next((n for n in self.nics.values() if n.id.lower() == nic_id.lower()), None)
            if nic is None:
                raise ArmFault(
                    400,
                    "InvalidResourceReference",
                    f"Resource {nic_id} referenced by resource {vm.id} was not found. Please make sure that the "
                    "referenced resource exists, and that both resources are in the same region.",
                )
            if nic.vm_id and nic.vm_id.lower() != vm.id.lower():
                raise messages.nic_in_use(nic.id, nic.vm_id)
            if nic.reserved_for and nic.reserved_until > now and nic.reserved_for.lower() != vm.id.lower():
                raise messages.nic_reserved(nic.reserved_for, int(self.timings.nic_reservation_s))
        for nic_id in vm.nic_ids:
            for nic in self.nics.values():
                if nic.id.lower() == nic_id.lower():
                    nic.vm_id = vm.id
                    nic.reserved_for = ""

    def delete_vm(self, name: str, now: float) -> Operation | None:
        vm = self.vms.get(name)
        if vm is None:
            return None
        vm.state = "Deleting"
        # with no delay the caller's next settle finishes it, so that hooks run outside the lock
        return self.start_operation("delete_vm", name, "Microsoft.Compute", self.timings.vm_delete_s, now)


_RESERVED_TAG_CHARACTERS = set("<>%&\\?/")


def resource_tags(body: dict[str, Any]) -> dict[str, str]:
    """A request's tags, refused as Azure refuses them (reserved characters, too many, too long)."""
    raw = body.get("tags") or {}
    if not isinstance(raw, dict):
        raise messages.bad_request("InvalidRequestContent", "The property 'tags' must be an object of strings.")
    tags = {str(k): str(v) for k, v in raw.items()}
    bad = [k for k in tags if _RESERVED_TAG_CHARACTERS & set(k) or any(ord(c) < 32 for c in k)]
    if bad:
        names = ",".join(bad)
        raise messages.bad_request(
            "InvalidTagNameCharacters",
            f"The tag names '{names}' have reserved characters '<,>,%,&,\\,?,/' or control characters.",
        )
    if len(tags) > 50:
        raise messages.bad_request("InvalidTemplate", f"The number of tags {len(tags)} exceeds the limit of 50.")
    long_names = [k for k, v in tags.items() if len(k) > 512 or len(v) > 256]
    if long_names:
        raise messages.bad_request(
            "InvalidTagNameLength" if len(long_names[0]) > 512 else "InvalidTagValueLength",
            f"The tag '{long_names[0][:64]}' is too long: names may have 512 characters and values 256.",
        )
    return tags


def _bind(hook: VmHook, info: VmInfo) -> Callable[[], None]:
    return lambda: hook(info)
