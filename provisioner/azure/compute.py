"""``AzureCompute``: the ``Compute`` port over the Azure compute and network SDKs.

Resources live in the cluster's node resource group and are named by the caller
(``aks-<nodeclaim>``), so every create is idempotent: a PUT of a resource that exists
returns it. ``begin_create_vm`` hands the whole create (the PUT and its long-running
operation) to a thread pool and returns a ``VmCreation`` at once, so one slow create
never holds up another; its ``result()`` returns the ``VmInfo`` or raises the typed error,
sync (refused PUT) and async (failed operation) alike. Every method raises only
``provisioner.model.errors.CloudError`` subclasses.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import Any, TypeVar

from azure.core.exceptions import AzureError, ResourceNotFoundError

from provisioner.azure.clients import AzureClients, build_clients
from provisioner.azure.config import AzureConfig
from provisioner.azure.errors import map_error
from provisioner.azure.payloads import nic_body, nic_info, tags_match, vm_body, vm_info
from provisioner.azure.quota_reader import as_json, read_usages
from provisioner.model.catalog import Catalog, catalog_from_skus, load_catalog
from provisioner.model.errors import CloudUnavailable, InputError
from provisioner.model.ports import Compute, NicInfo, NicSpec, VmInfo, VmSpec
from provisioner.model.quota import QuotaSnapshot

__all__ = ["AzureCompute", "VmCreation"]

T = TypeVar("T")
OPERATION_TIMEOUT_S = 900.0


class VmCreation:
    """A VM create in flight: ``done()`` and ``result(timeout)`` (VmInfo, or the typed error)."""

    def __init__(self, name: str, future: Future[VmInfo]) -> None:
        self.name = name
        self._future = future

    def done(self) -> bool:
        return self._future.done()

    def result(self, timeout: float | None = None) -> VmInfo:
        return self._future.result(timeout)

    def add_done_callback(self, callback: Callable[[VmCreation], None]) -> None:
        self._future.add_done_callback(lambda _: callback(self))


def _delete(begin: Callable[[], Any]) -> None:
    """Run a delete to its end; a resource already gone is fine."""
    try:
        begin().result()
    except ResourceNotFoundError:
        return
    except AzureError as e:
        raise map_error(e) from e


def _call(action: Callable[[], T]) -> T:
    try:
        return action()
    except AzureError as e:
        raise map_error(e) from e


class AzureCompute:
    def __init__(self, config: AzureConfig, clients: AzureClients | None = None) -> None:
        self.config = config
        self.clients = clients or build_clients(config)
        self._pool = ThreadPoolExecutor(max_workers=config.workers, thread_name_prefix="azure-vm-create")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.clients.close()

    def __enter__(self) -> AzureCompute:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    @property
    def _group(self) -> str:
        return self.config.resource_group

    # --- NICs ------------------------------------------------------------------------
    def create_nic(self, spec: NicSpec) -> NicInfo:
        network = self.clients.network
        body = nic_body(spec, self.config.location)
        nic = _call(lambda: network.network_interfaces.begin_create_or_update(self._group, spec.name, body).result())
        return nic_info(as_json(nic))

    def delete_nic(self, name: str) -> None:
        """Delete a NIC; gone already is fine. A NIC still attached to a VM raises (400 NicInUse)."""
        network = self.clients.network
        _delete(lambda: network.network_interfaces.begin_delete(self._group, name))

    def list_nics(self, tags: dict[str, str]) -> list[NicInfo]:
        network = self.clients.network
        nics = _call(lambda: [nic_info(as_json(n)) for n in network.network_interfaces.list(self._group)])
        return [n for n in nics if tags_match(n.tags, tags)]

    # --- VMs -------------------------------------------------------------------------
    def begin_create_vm(self, spec: VmSpec) -> VmCreation:
        return VmCreation(spec.name, self._pool.submit(self._create_vm, spec))

    def _create_vm(self, spec: VmSpec) -> VmInfo:
        compute = self.clients.compute
        body = vm_body(spec, self.config.location)
        poller = _call(lambda: compute.virtual_machines.begin_create_or_update(self._group, spec.name, body))
        vm = _call(lambda: poller.result(timeout=OPERATION_TIMEOUT_S))
        if not poller.done() or vm is None:
            raise CloudUnavailable(
                "OperationTimeout", f"creating virtual machine {spec.name} did not finish within {OPERATION_TIMEOUT_S:.0f} s"
            )
        return vm_info(as_json(vm))

    def get_vm(self, name: str) -> VmInfo | None:
        compute = self.clients.compute
        try:
            vm = compute.virtual_machines.get(self._group, name)
        except ResourceNotFoundError:
            return None
        except AzureError as e:
            raise map_error(e) from e
        return vm_info(as_json(vm))

    def delete_vm(self, name: str) -> None:
        """Delete the VM only (its OS disk goes with it; its NIC stays, detached)."""
        compute = self.clients.compute
        _delete(lambda: compute.virtual_machines.begin_delete(self._group, name))

    def list_vms(self, tags: dict[str, str]) -> list[VmInfo]:
        compute = self.clients.compute
        vms = _call(lambda: [vm_info(as_json(v)) for v in compute.virtual_machines.list(self._group)])
        return [v for v in vms if tags_match(v.tags, tags)]

    # --- quota and sizes ---------------------------------------------------------------
    def read_quota(self) -> QuotaSnapshot:
        return read_usages(self.clients.compute, self.config)

    def list_skus(self) -> Catalog:
        """The location's VM sizes from the resource-SKU API, priced from the bundled catalog."""
        compute = self.clients.compute
        location = self.config.location
        skus: list[dict[str, Any]] = _call(
            lambda: [as_json(s) for s in compute.resource_skus.list(filter=f"location eq '{location}'")]
        )
        vm_skus = [s for s in skus if s.get("resourceType") == "virtualMachines"]
        try:
            bundled = load_catalog(location)
        except InputError:
            bundled = None
        prices = {it.name: (it.price_on_demand, it.price_spot) for it in bundled.types} if bundled else {}
        return catalog_from_skus(location, vm_skus, prices, source="azure")


def _implements_the_port(adapter: AzureCompute) -> Compute:
    return adapter  # mypy checks that AzureCompute satisfies the Compute protocol
