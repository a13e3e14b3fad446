"""The narrow ports through which the controller acts, in our own words.

Adapters implement them structurally (``provisioner.azure`` for ``Compute``,
``provisioner.kube`` for ``Kube``); the controller only ever sees these types. Every
method raises ``provisioner.model.errors.CloudError`` subclasses (Compute) or
``KubeError`` (Kube) for refusals, never SDK exceptions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from provisioner.model.quota import QuotaSnapshot

__all__ = ["Clock", "Compute", "NicInfo", "NicSpec", "VmInfo", "VmSpec"]


class Clock(Protocol):
    def now(self) -> datetime: ...


@dataclass(frozen=True, slots=True)
class NicSpec:
    name: str  # aks-<nodeclaim>
    subnet_id: str
    tags: dict[str, str] = field(default_factory=dict)
    accelerated_networking: bool = False


@dataclass(frozen=True, slots=True)
class NicInfo:
    id: str
    name: str
    private_ip: str
    tags: dict[str, str]
    vm_id: str = ""  # the VM it is attached to, "" when free


@dataclass(frozen=True, slots=True)
class VmSpec:
    name: str  # aks-<nodeclaim>
    size: str  # Standard_D4s_v5
    nic_id: str
    image_id: str
    zone: str = ""  # "" for a regional VM, else "1", "2", "3"
    spot: bool = False
    os_disk_gb: int = 128
    tags: dict[str, str] = field(default_factory=dict)
    custom_data: str = ""  # base64 bootstrap data
    admin_username: str = "azureuser"
    ssh_public_key: str = ""


@dataclass(frozen=True, slots=True)
class VmInfo:
    id: str
    name: str
    size: str
    zone: str
    spot: bool
    provisioning_state: str  # Creating | Succeeded | Failed | Deleting
    tags: dict[str, str]
    created_at: datetime | None = None

    @property
    def provider_id(self) -> str:
        """The Node's spec.providerID for this VM."""
        return f"azure://{self.id}"


class Compute(Protocol):
    """Azure compute and network operations the controller needs. Creates are idempotent by name."""

    def create_nic(self, spec: NicSpec) -> NicInfo: ...

    def delete_nic(self, name: str) -> None: ...

    def list_nics(self, tags: dict[str, str]) -> list[NicInfo]: ...

    def begin_create_vm(self, spec: VmSpec) -> Any:
        """Start the create; returns a handle whose ``result()`` blocks until it ends (VmInfo)
        or raises the typed error; ``done()`` says whether it has ended."""
        ...

    def get_vm(self, name: str) -> VmInfo | None: ...

    def delete_vm(self, name: str) -> None: ...

    def list_vms(self, tags: dict[str, str]) -> list[VmInfo]: ...

    def read_quota(self) -> QuotaSnapshot: ...
