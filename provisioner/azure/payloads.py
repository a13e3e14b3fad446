"""VM and NIC request bodies from our specs, and our values from Azure's JSON.

The bodies are plain ARM JSON (what ``az vm create --debug`` shows), so the same shapes
serve Azure and the emulator; responses are read from the SDK models' JSON form.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from provisioner.model.ports import NicInfo, NicSpec, VmInfo, VmSpec

__all__ = ["image_reference", "nic_body", "nic_info", "tags_match", "vm_body", "vm_info"]


def image_reference(image_id: str) -> dict[str, str]:
    """``/CommunityGalleries/…`` and ``/SharedGalleries/…`` ids, ``publisher:offer:sku:version``, or a resource id."""
    if image_id.lower().startswith("/communitygalleries/"):
        return {"communityGalleryImageId": image_id}
    if image_id.lower().startswith("/sharedgalleries/"):
        return {"sharedGalleryImageId": image_id}
    parts = image_id.split(":")
    if len(parts) == 4 and not image_id.startswith("/"):
        return dict(zip(("publisher", "offer", "sku", "version"), parts, strict=True))
    return {"id": image_id}


def nic_body(spec: NicSpec, location: str) -> dict[str, Any]:
    return {
        "location": location,
        "tags": dict(spec.tags),
        "properties": {
            "enableAcceleratedNetworking": spec.accelerated_networking,
            "ipConfigurations": [
                {
                    "name": "ipconfig1",
                    "properties": {
                        "primary": True,
                        "privateIPAllocationMethod": "Dynamic",
                        "privateIPAddressVersion": "IPv4",
                        "subnet": {"id": spec.subnet_id},
                    },
                }
            ],
        },
    }


def vm_body(spec: VmSpec, location: str) -> dict[str, Any]:
    os_profile: dict[str, Any] = {
        "computerName": spec.name,
        "adminUsername": spec.admin_username,
        "linuxConfiguration": {"disablePasswordAuthentication": True},
    }
    if spec.ssh_public_key:
        os_profile["linuxConfiguration"]["ssh"] = {
            "publicKeys": [{"path": f"/home/{spec.admin_username}/.ssh/authorized_keys", "keyData": spec.ssh_public_key}]
        }
    if spec.custom_data:
        os_profile["customData"] = spec.custom_data
    properties: dict[str, Any] = {
        "hardwareProfile": {"vmSize": spec.size},
        "storageProfile": {
            "imageReference": image_reference(spec.image_id),
            "osDisk": {
                "createOption": "FromImage",
                "diskSizeGB": spec.os_disk_gb,
                "managedDisk": {"storageAccountType": "StandardSSD_LRS"},
                "deleteOption": "Delete",
            },
        },
        "osProfile": os_profile,
        "networkProfile": {
            # Detach: deleting the VM leaves the NIC, which the caller deletes on its own terms
            "networkInterfaces": [{"id": spec.nic_id, "properties": {"primary": True, "deleteOption": "Detach"}}]
        },
    }
    if spec.spot:
        properties.update({"priority": "Spot", "evictionPolicy": "Delete", "billingProfile": {"maxPrice": -1}})
    body: dict[str, Any] = {"location": location, "tags": dict(spec.tags), "properties": properties}
    if spec.zone:
        body["zones"] = [spec.zone]
    return body


def _time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


def vm_info(vm: dict[str, Any]) -> VmInfo:
    props = vm.get("properties") or {}
    zones = vm.get("zones") or []
    return VmInfo(
        id=str(vm.get("id") or ""),
        name=str(vm.get("name") or ""),
        size=str((props.get("hardwareProfile") or {}).get("vmSize") or ""),
        zone=str(zones[0]) if zones else "",
        spot=str(props.get("priority") or "").lower() in ("spot", "low"),
        provisioning_state=str(props.get("provisioningState") or ""),
        tags={str(k): str(v) for k, v in (vm.get("tags") or {}).items()},
        created_at=_time(props.get("timeCreated")),
    )


def nic_info(nic: dict[str, Any]) -> NicInfo:
    props = nic.get("properties") or {}
    configs = props.get("ipConfigurations") or [{}]
    ip = str((configs[0].get("properties") or {}).get("privateIPAddress") or "")
    return NicInfo(
        id=str(nic.get("id") or ""),
        name=str(nic.get("name") or ""),
        private_ip=ip,
        tags={str(k): str(v) for k, v in (nic.get("tags") or {}).items()},
        vm_id=str((props.get("virtualMachine") or {}).get("id") or ""),
    )


def tags_match(tags: dict[str, str], wanted: dict[str, str]) -> bool:
    return all(tags.get(k) == v for k, v in wanted.items())
