"""Launching one NodeClaim on Azure: NIC, then VM, named and tagged from the claim.

For a claim ``general-purpose-pq7gl`` both resources are named ``aks-general-purpose-pq7gl``
and tagged with the cluster, the NodePool and the NodeClaim, so a retry finds what an earlier
attempt made (idempotent), and garbage collection can prove ownership.

The steps, each logged through the vocabulary:

1. ``selected instance type`` and ``resolved image`` (the AKSNodeClass's image);
2. a VM of that name already there (Creating or Succeeded) is adopted, never created twice;
3. the NIC is created (idempotent by name), then the VM PUT; its long-running operation is
   polled on a worker of a small pool, so one slow create never holds up the others;
4. on failure the NIC (and a VM left in ``Failed`` state) is deleted, the error is mapped to
   the NodeClaim's ``Launched`` condition reason, and the unavailable-offerings cache learns
   from it; the quota cache re-reads usage after every create or delete.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from provisioner.controller.quota_cache import QuotaCache
from provisioner.controller.unavailable import UnavailableOfferings
from provisioner.model.errors import (
    AllocationFailed,
    CloudError,
    ImageNotFound,
    InvalidVmSize,
    OverconstrainedAllocation,
    QuotaExceeded,
    SkuNotAvailable,
    UnknownCloudError,
    ZonalAllocationFailed,
)
from provisioner.model.instance_type import InstanceType
from provisioner.model.ports import Compute, NicSpec, VmInfo, VmSpec
from provisioner.observability.logwriter import LogWriter

__all__ = ["LaunchRequest", "LaunchResult", "Launcher", "launch_reason", "quota_fields", "resource_name"]

TAG_CLUSTER = "karpenter.azure.com_cluster"
TAG_NODEPOOL = "karpenter.sh_nodepool"
TAG_NODECLAIM = "karpenter.azure.com_nodeclaim"


def resource_name(claim: str) -> str:
    """The VM and NIC name of a claim (``aks-<nodeclaim>``)."""
    return f"aks-{claim}"


@dataclass(frozen=True, slots=True)
class LaunchRequest:
    claim: str
    nodepool: str
    instance_type: InstanceType
    capacity_type: str  # on-demand | spot
    zone: str  # "" = regional
    image_id: str
    subnet_id: str
    cluster: str
    os_disk_gb: int = 128
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return resource_name(self.claim)

    def owner_tags(self) -> dict[str, str]:
        return {**self.tags, TAG_CLUSTER: self.cluster, TAG_NODEPOOL: self.nodepool, TAG_NODECLAIM: self.claim}


@dataclass(frozen=True, slots=True)
class LaunchResult:
    request: LaunchRequest
    vm: VmInfo | None = None
    error: CloudError | None = None
    adopted: bool = False
    finished_at: datetime | None = None  # when Azure answered (before the quota re-read that counts it)

    @property
    def ok(self) -> bool:
        return self.vm is not None

    @property
    def reason(self) -> str:
        """The ``Launched`` condition reason."""
        return "Launched" if self.ok else launch_reason(self.error)


def launch_reason(error: BaseException | None) -> str:
    """Karpenter's Azure ``Launched`` reasons for a failed create."""
    if isinstance(error, QuotaExceeded):
        return "SubscriptionQuotaReached"
    if isinstance(error, SkuNotAvailable):
        return "SKUNotAvailable"
    if isinstance(error, ZonalAllocationFailed):
        return "ZonalAllocationFailure"
    if isinstance(error, AllocationFailed):
        return "AllocationFailure"
    if isinstance(error, OverconstrainedAllocation):
        return "OverconstrainedZonalAllocationFailure" if error.zonal else "OverconstrainedAllocationFailure"
    if isinstance(error, InvalidVmSize | ImageNotFound):
        return "InstanceTypeResolutionFailed"
    if isinstance(error, CloudError):
        return "CreateInstanceFailed"
    return "LaunchFailed"


def quota_fields(error: QuotaExceeded) -> dict[str, Any]:
    """The structured ``quota`` field of a log line."""
    return {
        "scope": error.scope,
        "name": error.quota,
        "region": error.region,
        "limit": error.limit,
        "usage": error.usage,
        "required": error.required,
        "newLimit": error.new_limit,
    }


def error_fields(error: BaseException) -> dict[str, Any]:
    out: dict[str, Any] = {"error": str(error)}
    if isinstance(error, CloudError):
        out["error.code"] = error.code or type(error).__name__
        if isinstance(error, QuotaExceeded):
            out["quota"] = quota_fields(error)
    return out


class Launcher:
    """Runs launches on a small thread pool; at most one launch per claim at a time."""

    def __init__(
        self,
        compute: Compute,
        log: LogWriter,
        unavailable: UnavailableOfferings,
        clock: Callable[[], datetime],
        quota: QuotaCache | None = None,
        workers: int = 8,
    ) -> None:
        self._compute = compute
        self._log = log
        self._unavailable = unavailable
        self._clock = clock
        self._quota = quota
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="launch")
        self._active: dict[str, Future[LaunchResult]] = {}
        self._lock = threading.Lock()
        self.create_attempts = 0
        self.quota_errors = 0

    def submit(self, request: LaunchRequest, on_done: Callable[[LaunchResult], None] | None = None) -> Future[LaunchResult]:
        """Start (or join) the launch of ``request.claim``; ``on_done`` runs on the worker when it ends."""
        with self._lock:
            running = self._active.get(request.claim)
            if running is not None and not running.done():
                return running
            if self._quota is not None:
                self._quota.reserve(request.claim, request.instance_type.vcpus, request.instance_type.family,
                                    request.capacity_type == "spot")
            future = self._pool.submit(self._run, request, on_done)
            self._active[request.claim] = future
            return future

    def in_flight(self) -> list[str]:
        with self._lock:
            return [claim for claim, f in self._active.items() if not f.done()]

    def shutdown(self, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=not wait)

    def _run(self, request: LaunchRequest, on_done: Callable[[LaunchResult], None] | None) -> LaunchResult:
        try:
            result = self.launch(request)
        except Exception as e:  # an adapter bug must not kill the worker silently
            result = LaunchResult(request, error=UnknownCloudError("", f"{type(e).__name__}: {e}"))
        finally:
            if self._quota is not None:
                try:
                    self._quota.settle(request.claim)
                except Exception:
                    self._quota.settle(request.claim, refresh=False)
        if on_done is not None:
            on_done(result)
        return result

    def launch(self, request: LaunchRequest) -> LaunchResult:
        """The synchronous launch; ``submit`` runs it on the pool."""
        it = request.instance_type
        claim = request.claim
        self._log.log("nodeclaim.instance_selected", name=claim, message=f"selected instance type {it.name}",
                      **{"instance-type": it.name, "zone": request.zone, "capacity-type": request.capacity_type})
        self._log.log("nodeclaim.image_resolved", name=claim, message=f"resolved image {request.image_id}",
                      **{"image-id": request.image_id, "instance-type": it.name})
        existing = self._compute.get_vm(request.name)
        if existing is not None and existing.provisioning_state in ("Creating", "Succeeded", "Updating"):
            self._log.log("vm.adopted", name=claim, vm=existing.name, **{"provider-id": existing.provider_id})
            return LaunchResult(request, vm=existing, adopted=True, finished_at=self._clock())
        if existing is not None:
            self._delete_vm(claim, request.name)
        self._log.log("nic.creating", name=claim, message=f"creating network interface {request.name}",
                      nic=request.name)
        try:
            nic = self._compute.create_nic(NicSpec(request.name, request.subnet_id, request.owner_tags(),
                                                   it.accelerated_networking))
        except CloudError as e:
            return self._failed(request, e, nic_created=True)
        self._log.log("nic.created", name=claim, message=f"created network interface {nic.id}", nic=nic.name,
                      id=nic.id)
        spec = VmSpec(
            name=request.name,
            size=it.name,
            nic_id=nic.id,
            image_id=request.image_id,
            zone=request.zone,
            spot=request.capacity_type == "spot",
            os_disk_gb=request.os_disk_gb,
            tags=request.owner_tags(),
        )
        self._log.log("vm.creating", name=claim, message=f"creating virtual machine {request.name} ({it.name})",
                      vm=request.name, **{"instance-type": it.name})
        with self._lock:
            self.create_attempts += 1
        try:
            vm: VmInfo = self._compute.begin_create_vm(spec).result()
        except CloudError as e:
            return self._failed(request, e, nic_created=True, vm_maybe=True)
        finished = self._clock()
        launched: dict[str, Any] = {
            "provider-id": vm.provider_id, "instance-type": it.name, "zone": vm.zone or request.zone,
            "capacity-type": request.capacity_type,
            "allocatable": {"cpu": f"{it.vcpus}", "memory": f"{it.memory_mib}Mi", "pods": str(it.max_pods)},
        }
        self._log.log("nodeclaim.launched", name=claim, **launched)
        return LaunchResult(request, vm=vm, finished_at=finished)

    def _failed(self, request: LaunchRequest, error: CloudError, nic_created: bool, vm_maybe: bool = False) -> LaunchResult:
        claim = request.claim
        if isinstance(error, QuotaExceeded):
            with self._lock:
                self.quota_errors += 1
        if vm_maybe:
            try:
                if self._compute.get_vm(request.name) is not None:
                    self._delete_vm(claim, request.name)
            except CloudError:
                pass  # garbage collection proves ownership by tag and removes it later
        if nic_created:
            try:
                self._compute.delete_nic(request.name)
                self._log.log("nic.deleted", name=claim, message=f"deleted network interface {request.name}",
                              nic=request.name)
            except CloudError:
                pass
        now = self._clock()
        entry = self._unavailable.mark_error(error, request.instance_type, request.capacity_type, request.zone, now)
        fields = error_fields(error)
        self._log.log("nodeclaim.launch_failed", name=claim, reason=launch_reason(error), **fields)
        if entry is not None:
            self._log.log(
                "offering.unavailable", name=claim, unavailable=entry.key, reason=entry.reason,
                ttl=str(entry.expires - now), **{"instance-type": request.instance_type.name,
                                                  "capacity-type": request.capacity_type, "zone": request.zone},
            )
        return LaunchResult(request, error=error)

    def _delete_vm(self, claim: str, name: str) -> None:
        self._compute.delete_vm(name)
        self._log.log("gc.vm_deleted", message=f"deleted virtual machine {name}", vm=name, NodeClaim={"name": claim})
