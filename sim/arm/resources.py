"""Compute and network resources as ARM serves them: VMs, NICs, usages, SKUs, operations.

Each handler takes the routed request and returns ``(status, body, headers)`` or raises an
``ArmFault``. Creates and deletes are long-running: ``201``/``202`` with an absolute
``Azure-AsyncOperation`` URL whose status reads ``InProgress`` until the operation is due.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from sim.arm import messages
from sim.arm.faults import FaultRule
from sim.arm.ledger import VcpuCharge, localized_name
from sim.arm.messages import ArmFault
from sim.arm.quota_api import QuotaApi
from sim.arm.routes import Route
from sim.arm.skus import SkuTable
from sim.arm.state import ArmState, Nic, Operation, Vm, resource_tags

__all__ = ["ResourceApi"]

Result = tuple[int, dict[str, Any] | None, dict[str, str]]
_ASYNC = {
    "allocation_failed": lambda zonal: messages.allocation_failed(),
    "zonal_allocation_failed": lambda zonal: messages.zonal_allocation_failed(),
    "overconstrained": messages.overconstrained,
}


def _filter_location(expression: str) -> str:
    """The location of ``$filter=location eq 'westus2'``; "" when there is no such clause."""
    match = re.search(r"location\s+eq\s+'([^']*)'", expression, re.IGNORECASE)
    return match.group(1) if match else ""


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


class ResourceApi:
    def __init__(self, state: ArmState, skus: SkuTable) -> None:
        self.state = state
        self.skus = skus
        self.quota = QuotaApi(state)
        self.known_images: frozenset[str] | None = None  # None: every image exists

    def act(self, route: Route, body: dict[str, Any], query: dict[str, str], rule: FaultRule | None,
            base_url: str, now: float) -> Result:
        op, params = route.op, route.params
        api = query.get("api-version", "")
        if op == "get_usages":
            return 200, self.usages(), {}
        if op == "list_skus":
            wanted = _filter_location(query.get("$filter", ""))
            if wanted and wanted.lower() != self.state.location.lower():
                return 200, {"value": []}, {}
            return 200, {"value": self.skus.records}, {}
        if op == "create_vm":
            return self.put_vm(params["name"], body, rule, base_url, api, now)
        if op == "get_vm":
            vm = self.state.vms.get(params["name"])
            if vm is None:
                raise messages.not_found("Microsoft.Compute/virtualMachines", params["name"], self.state.resource_group)
            return 200, self.vm_json(vm), {}
        if op == "list_vms":
            return 200, {"value": [self.vm_json(vm) for vm in self.state.vms.values()]}, {}
        if op == "delete_vm":
            op_record = self.state.delete_vm(params["name"], now)
            return self._accepted(op_record, base_url, api)
        if op == "create_nic":
            status, nic, nic_op = self.state.put_nic(params["name"], body, now)
            return status, self.nic_json(nic), self._async_headers(nic_op, base_url, api) if nic_op else {}
        if op == "get_nic":
            found = self.state.nics.get(params["name"])
            if found is None:
                raise messages.not_found("Microsoft.Network/networkInterfaces", params["name"], self.state.resource_group)
            return 200, self.nic_json(found), {}
        if op == "list_nics":
            return 200, {"value": [self.nic_json(n) for n in self.state.nics.values()]}, {}
        if op == "delete_nic":
            return self._accepted(self.state.delete_nic(params["name"], now), base_url, api)
        if op == "get_subnet":
            return 200, self.subnet_json(), {}
        if op == "get_operation":
            return 200, self.operation_json(params["id"]), {}
        if op == "get_resource_group":
            group = self.state.resource_group
            return 200, {"id": self.state.group_id, "name": group, "type": "Microsoft.Resources/resourceGroups",
                         "location": self.state.location, "properties": {"provisioningState": "Succeeded"}}, {}
        return self.quota.act(op, params, body, base_url, api, now)

    # --- usages ----------------------------------------------------------------------
    def usages(self) -> dict[str, Any]:
        used = self.state.usage()
        ledger = self.state.ledger
        value = [
            {"unit": "Count", "currentValue": used.get(name, 0), "limit": ledger.limits[name],
             "name": {"value": name, "localizedValue": localized_name(name)}}
            for name in ledger.names()
        ]
        return {"value": value}

    # --- VMs -------------------------------------------------------------------------
    def put_vm(self, name: str, body: dict[str, Any], rule: FaultRule | None, base_url: str, api: str,
               now: float) -> Result:
        state = self.state
        vm_id = state.vm_resource_id(name)
        props = body.get("properties")
        if not isinstance(props, dict):
            raise messages.bad_request("InvalidParameter", "Required parameter 'properties' is missing (null).")
        location = str(body.get("location") or "")
        if location.replace(" ", "").lower() != state.location.lower():
            raise messages.bad_request(
                "LocationNotAvailableForResourceType" if location else "InvalidParameter",
                f"The provided location '{location}' is not available for resource type "
                f"'Microsoft.Compute/virtualMachines'. This emulator serves '{state.location}'."
                if location else "Required parameter 'location' is missing (null).",
            )
        size = str((props.get("hardwareProfile") or {}).get("vmSize") or "")
        if not size:
            raise messages.bad_request("InvalidParameter", "Required parameter 'hardwareProfile.vmSize' is missing (null).")
        nics = (props.get("networkProfile") or {}).get("networkInterfaces") or []
        nic_ids = tuple(str(n.get("id") or "") for n in nics if isinstance(n, dict))
        if not nic_ids or not all(nic_ids):
            raise messages.bad_request("InvalidParameter", "Required parameter 'networkProfile.networkInterfaces' is missing (null).")
        zones = body.get("zones") or []
        zone = str(zones[0]) if isinstance(zones, list) and zones else ""
        spot = str(props.get("priority") or "Regular").lower() in ("spot", "low")
        tags = resource_tags(body)
        facts = self.skus.get(size)
        if facts is None:
            raise messages.invalid_vm_size(size, state.location)
        size = facts.name
        existing = state.vms.get(name)
        if existing is not None and existing.state == "Deleting":
            raise ArmFault(409, "OperationNotAllowed", f"Operation 'createOrUpdate' is not allowed on VM '{name}' "
                           "since the VM is marked for deletion. You can only retry the Delete operation (or wait "
                           "for an ongoing one to complete).")
        if existing is not None and existing.state != "Failed":
            if (existing.size.lower(), existing.zone, existing.spot) != (size.lower(), zone, spot):
                raise ArmFault(409, "PropertyChangeNotAllowed", "Changing property 'hardwareProfile.vmSize', "
                               "'zones' or 'priority' of an existing virtual machine is not supported here.")
            return 200, self.vm_json(existing), {}
        if rule is not None and rule.kind == "sku_not_available":
            raise messages.sku_not_available(state.subscription, state.location, size, zone)
        if rule is not None and rule.kind == "public_ip_limit":
            raise messages.public_ip_limit(20)
        if facts.not_available or (zone and zone in facts.restricted_zones):
            raise messages.sku_not_available(state.subscription, state.location, size, zone)
        if zone and facts.zones and zone not in facts.zones:
            raise messages.sku_not_available(state.subscription, state.location, size, zone)
        if spot and not facts.low_priority_capable:
            raise messages.bad_request("InvalidParameter", f"The VM size {size} does not support Spot priority.")
        self._check_image(props)
        charge = VcpuCharge(facts.vcpus, facts.family, spot)
        others = [vm.charge for vm in state.vms.values() if vm.state != "Failed" and vm.name != name]
        if rule is not None and rule.kind == "legacy_quota":
            limit = state.ledger.limits.get("cores", 0)
            raise messages.legacy_quota_exceeded(limit, state.ledger.usage(others).get("cores", 0), facts.vcpus)
        state.ledger.check(charge, others)
        vm = Vm(name, vm_id, size, zone, spot, tags, nic_ids, body, charge, datetime.now().astimezone())
        state.attach(vm, now)
        state.vms[name] = vm
        failure = _ASYNC[rule.kind](bool(zone)) if rule is not None and rule.kind in _ASYNC else None
        op = state.start_operation("create_vm", name, "Microsoft.Compute", state.timings.vm_create_s, now, failure)
        return 201, self.vm_json(vm), self._async_headers(op, base_url, api)

    def _check_image(self, props: dict[str, Any]) -> None:
        if self.known_images is None:
            return
        reference = (props.get("storageProfile") or {}).get("imageReference") or {}
        image = str(reference.get("id") or reference.get("communityGalleryImageId")
                    or reference.get("sharedGalleryImageId") or ":".join(
                        str(reference.get(k, "")) for k in ("publisher", "offer", "sku", "version")))
        if image not in self.known_images:
            raise ArmFault(404, "PlatformImageNotFound", f"The platform image '{image}' is not available. Verify "
                           "that all fields in the storage profile are correct. For more details about storage "
                           "profile information, please refer to https://aka.ms/storageprofile")

    def vm_json(self, vm: Vm) -> dict[str, Any]:
        props = dict(vm.body.get("properties") or {})
        os_profile = dict(props.get("osProfile") or {})
        os_profile.pop("customData", None)
        os_profile.pop("adminPassword", None)
        if os_profile:
            props["osProfile"] = os_profile
        props.update({"vmId": vm.vm_id, "provisioningState": vm.state, "timeCreated": _iso(vm.created_at)})
        body: dict[str, Any] = {
            "name": vm.name, "id": vm.id, "type": "Microsoft.Compute/virtualMachines",
            "location": self.state.location, "tags": vm.tags, "properties": props,
        }
        if vm.zone:
            body["zones"] = [vm.zone]
        return body

    # --- NICs ------------------------------------------------------------------------
    def nic_json(self, nic: Nic) -> dict[str, Any]:
        props: dict[str, Any] = {
            "provisioningState": nic.state,
            "ipConfigurations": [{
                "name": "ipconfig1", "id": f"{nic.id}/ipConfigurations/ipconfig1",
                "properties": {"provisioningState": nic.state, "privateIPAddress": nic.private_ip,
                               "privateIPAllocationMethod": "Dynamic", "privateIPAddressVersion": "IPv4",
                               "subnet": {"id": nic.subnet_id}, "primary": True},
            }],
            "enableAcceleratedNetworking": bool((nic.body.get("properties") or {}).get("enableAcceleratedNetworking")),
            "primary": True,
        }
        if nic.vm_id:
            props["virtualMachine"] = {"id": nic.vm_id}
        return {"name": nic.name, "id": nic.id, "type": "Microsoft.Network/networkInterfaces",
                "location": self.state.location, "tags": nic.tags, "properties": props}

    def subnet_json(self) -> dict[str, Any]:
        return {"name": "aks-subnet", "id": self.state.subnet_id,
                "properties": {"addressPrefix": str(self.state.subnet), "provisioningState": "Succeeded"}}

    # --- long-running operations -------------------------------------------------------
    def _async_headers(self, op: Operation, base_url: str, api: str) -> dict[str, str]:
        url = (f"{base_url}/subscriptions/{self.state.subscription}/providers/{op.provider}/locations/"
               f"{self.state.location}/operations/{op.id}?api-version={api}")
        return {"Azure-AsyncOperation": url}

    def _accepted(self, op: Operation | None, base_url: str, api: str) -> Result:
        if op is None:
            return 204, None, {}
        return 202, None, self._async_headers(op, base_url, api)

    def operation_json(self, op_id: str) -> dict[str, Any]:
        op = self.state.operations.get(op_id)
        if op is None:
            raise messages.not_found("operations", op_id)
        body: dict[str, Any] = {"name": op.id, "status": op.status, "startTime": _iso(op.started)}
        if op.ended:
            body["endTime"] = _iso(op.ended)
        if op.failure is not None and op.status == "Failed":
            body["error"] = {"code": op.failure.code, "message": op.failure.message}
        return body
