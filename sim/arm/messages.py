"""Azure Resource Manager's error texts, word for word.

Every refusal the emulator sends is an ``ArmFault``: an HTTP status, Azure's error code and
message, optional ``details`` and headers. The texts follow what Azure Resource Manager
returns for the same condition (only subscription ids, resource ids and numbers vary), so a
client that parses Azure's wording parses the emulator's the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ArmFault",
    "allocation_failed",
    "bad_request",
    "family_quota_exceeded",
    "internal_error",
    "invalid_vm_size",
    "nic_in_use",
    "nic_reserved",
    "not_found",
    "overconstrained",
    "regional_quota_exceeded",
    "service_unavailable",
    "sku_not_available",
    "spot_quota_exceeded",
    "subnet_full",
    "throttled",
    "zonal_allocation_failed",
]


@dataclass(eq=False)
class ArmFault(Exception):
    """An Azure-shaped error response: ``{"error": {"code", "message", "details"?}}``."""

    status: int
    code: str
    message: str
    details: tuple[dict[str, Any], ...] = ()
    headers: dict[str, str] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            error["details"] = list(self.details)
        return {"error": error}


_PORTAL = (
    "https://aka.ms/ProdportalCRP/#blade/Microsoft_Azure_Capacity/UsageAndQuota.ReactView/Parameters/"
    "%7B%22subscriptionId%22:%22{sub}%22,%22command%22:%22openQuotaApprovalBlade%22,%22quotas%22:"
    "[%7B%22location%22:%22{location}%22,%22providerId%22:%22Microsoft.Compute%22,%22resourceName%22:"
    "%22{resource}%22,%22quotaRequest%22:%7B%22properties%22:%7B%22limit%22:{limit},%22unit%22:%22Count%22,"
    "%22name%22:%7B%22value%22:%22{resource}%22%7D%7D%7D%7D]%7D"
)
_READ_MORE = "https://docs.microsoft.com/en-us/azure/azure-supportability/"


def _quota_message(
    approved: str, resource: str, read_more: str, sub: str, location: str, limit: int, usage: int, required: int
) -> str:
    new_limit = usage + required
    portal = _PORTAL.format(sub=sub, location=location, resource=resource, limit=new_limit)
    return (
        f"Operation could not be completed as it results in exceeding approved {approved} quota. "
        f"Additional details - Deployment Model: Resource Manager, Location: {location}, "
        f"Current Limit: {limit}, Current Usage: {usage}, Additional Required: {required}, "
        f"(Minimum) New Limit Required: {new_limit}. Submit a request for Quota increase at {portal} "
        "by specifying parameters listed in the \u2018Details\u2019 section for deployment to succeed. "
        f"Please read more about quota limits at {_READ_MORE}{read_more}"
    )


def regional_quota_exceeded(sub: str, location: str, limit: int, usage: int, required: int) -> ArmFault:
    text = _quota_message(
        "Total Regional Cores", "cores", "regional-quota-requests", sub, location, limit, usage, required
    )
    return ArmFault(409, "OperationNotAllowed", text)


def family_quota_exceeded(
    sub: str, location: str, family: str, limit: int, usage: int, required: int
) -> ArmFault:
    text = _quota_message(f"{family} Cores", family, "per-vm-quota-requests", sub, location, limit, usage, required)
    return ArmFault(409, "OperationNotAllowed", text)


def spot_quota_exceeded(sub: str, location: str, limit: int, usage: int, required: int) -> ArmFault:
    text = _quota_message(
        "LowPriorityCores", "lowPriorityCores", "low-priority-quota", sub, location, limit, usage, required
    )
    return ArmFault(409, "OperationNotAllowed", text)


def sku_not_available(sub: str, location: str, size: str, zone: str) -> ArmFault:
    if zone:
        text = (
            f"The requested VM size for resource 'Following SKUs have failed for Capacity Restrictions: {size}' "
            f"is currently not available in location '{location}' zones '{zone}' for subscription '{sub}'. "
            "Please try another size or deploy to a different location or different zone. "
            "See https://aka.ms/azureskunotavailable for details."
        )
    else:
        text = (
            f"The requested VM size for resource 'Following SKUs have failed for Capacity Restrictions: {size}' "
            f"is currently not available in location '{location}'. Please try another size or deploy to a "
            "different location or different zone. See https://aka.ms/azureskunotavailable for details."
        )
    return ArmFault(409, "SkuNotAvailable", text)


def public_ip_limit(limit: int) -> ArmFault:
    return ArmFault(400, "PublicIPCountLimitReached",
                    f"Cannot create more than {limit} public IP addresses for this subscription in this region.")


def legacy_quota_exceeded(limit: int, usage: int, required: int) -> ArmFault:
    text = (
        f"Operation results in exceeding quota limits of Core. Maximum allowed: {limit}, Current in use: {usage}, "
        f"Additional requested: {required}. Please read more about quota increase at http://aka.ms/corequotaincrease."
    )
    return ArmFault(409, "OperationNotAllowed", text)


def invalid_vm_size(size: str, location: str) -> ArmFault:
    text = (
        f"The value {size} provided for the VM size is not valid. The valid sizes in the current region "
        f"'{location}' are listed by 'az vm list-sizes --location {location}'."
    )
    return ArmFault(400, "InvalidParameter", text, ({"code": "InvalidParameter", "target": "vmSize"},))


def allocation_failed() -> ArmFault:
    return ArmFault(
        200,
        "AllocationFailed",
        "Allocation failed. We do not have sufficient capacity for the requested VM size in this region. "
        "Read more about improving likelihood of allocation success at http://aka.ms/allocation-guidance",
    )


def zonal_allocation_failed() -> ArmFault:
    return ArmFault(
        200,
        "ZonalAllocationFailed",
        "Allocation failed. We do not have sufficient capacity for the requested VM size in this zone. "
        "Read more about improving likelihood of allocation success at http://aka.ms/allocation-guidance",
    )


def overconstrained(zonal: bool) -> ArmFault:
    constraints = " - Networking Constraints (such as Accelerated Networking or IPv6)\n - VM Size\n"
    if zonal:
        constraints += " - Availability Zone\n"
    return ArmFault(
        200,
        "OverconstrainedZonalAllocationRequest" if zonal else "OverconstrainedAllocationRequest",
        "Allocation failed. VM(s) with the following constraints cannot be allocated, because the condition "
        "is too restrictive. Please remove some constraints and try again. Constraints applied are:\n"
        + constraints,
    )


def subnet_full(subnet_id: str, prefix: str) -> ArmFault:
    return ArmFault(
        400,
        "SubnetIsFull",
        f"Subnet {subnet_id} with address prefix {prefix} does not have enough capacity for 1 IP addresses",
    )


def nic_in_use(nic_id: str, vm_id: str) -> ArmFault:
    return ArmFault(
        400,
        "NicInUse",
        f"Network Interface {nic_id} is used by existing resource {vm_id}. In order to delete the network "
        "interface, it must be dissociated from the resource. To learn more, see aka.ms/deletenic.",
    )


def nic_reserved(vm_id: str, seconds: int) -> ArmFault:
    return ArmFault(
        400,
        "NicReservedForAnotherVm",
        f"Nic(s) in request is reserved for another Virtual Machine for {seconds} seconds. Please provide "
        f"another nic(s) or retry after {seconds} seconds. Reserved VM: {vm_id}",
    )


def throttled(operation_group: str, retry_after: int, resource: str) -> ArmFault:
    return ArmFault(
        429,
        "OperationNotAllowed",
        "The server rejected the request because too many requests have been received for this subscription.",
        (
            {
                "code": "TooManyRequests",
                "target": operation_group,
                "message": json.dumps(
                    {"operationGroup": operation_group, "startTime": "", "endTime": "",
                     "allowedRequestCount": 0, "measuredRequestCount": 0}
                ),
            },
        ),
        {
            "Retry-After": str(retry_after),
            "x-ms-ratelimit-remaining-resource": f"{resource}/{operation_group};0",
            "x-ms-ratelimit-remaining-subscription-reads": "0",
            "x-ms-ratelimit-remaining-subscription-writes": "0",
        },
    )


def internal_error() -> ArmFault:
    return ArmFault(
        500, "InternalServerError", "An unexpected error occured while processing the request. Please retry."
    )


def service_unavailable() -> ArmFault:
    return ArmFault(503, "ServiceUnavailable", "The service is temporarily unavailable. Please retry later.")


def not_found(kind: str, name: str, group: str = "") -> ArmFault:
    where = f" under resource group '{group}'" if group else ""
    return ArmFault(
        404,
        "ResourceNotFound",
        f"The Resource '{kind}/{name}'{where} was not found. For more details please go to "
        "https://aka.ms/ARMResourceNotFoundFix",
    )


def bad_request(code: str, message: str) -> ArmFault:
    return ArmFault(400, code, message)
