"""The ARM paths the emulator answers, and which operation (for faults and the log) each is.

Paths are matched case-insensitively, as Azure Resource Manager does. Each route names an
operation (``create_vm``, ``get_usages``, …): the same names the faults file uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Route", "match_route"]

_SUB = r"/subscriptions/(?P<sub>[^/]+)"
_RG = _SUB + r"/resourceGroups/(?P<rg>[^/]+)"
_LOC = _SUB + r"/providers/Microsoft\.Compute/locations/(?P<loc>[^/]+)"
_QUOTA = _LOC + r"/providers/Microsoft\.Quota"

_TABLE: list[tuple[str, str, str]] = [
    ("GET", _LOC + r"/usages", "get_usages"),
    ("GET", _SUB + r"/providers/Microsoft\.Compute/skus", "list_skus"),
    ("PUT", _RG + r"/providers/Microsoft\.Compute/virtualMachines/(?P<name>[^/]+)", "create_vm"),
    ("GET", _RG + r"/providers/Microsoft\.Compute/virtualMachines/(?P<name>[^/]+)", "get_vm"),
    ("DELETE", _RG + r"/providers/Microsoft\.Compute/virtualMachines/(?P<name>[^/]+)", "delete_vm"),
    ("GET", _RG + r"/providers/Microsoft\.Compute/virtualMachines", "list_vms"),
    ("GET", _SUB + r"/providers/Microsoft\.Compute/virtualMachines", "list_vms"),
    ("PUT", _RG + r"/providers/Microsoft\.Network/networkInterfaces/(?P<name>[^/]+)", "create_nic"),
    ("GET", _RG + r"/providers/Microsoft\.Network/networkInterfaces/(?P<name>[^/]+)", "get_nic"),
    ("DELETE", _RG + r"/providers/Microsoft\.Network/networkInterfaces/(?P<name>[^/]+)", "delete_nic"),
    ("GET", _RG + r"/providers/Microsoft\.Network/networkInterfaces", "list_nics"),
    ("GET", _SUB + r"/providers/Microsoft\.Network/networkInterfaces", "list_nics"),
    (
        "GET",
        _RG + r"/providers/Microsoft\.Network/virtualNetworks/(?P<vnet>[^/]+)/subnets/(?P<name>[^/]+)",
        "get_subnet",
    ),
    ("GET", _SUB + r"/providers/Microsoft\.(?:Compute|Network)/locations/(?P<loc>[^/]+)/operations/(?P<id>[^/]+)",
     "get_operation"),
    ("GET", _QUOTA + r"/quotas/(?P<name>[^/]+)", "get_quota"),
    ("PUT", _QUOTA + r"/quotas/(?P<name>[^/]+)", "request_quota"),
    ("PATCH", _QUOTA + r"/quotas/(?P<name>[^/]+)", "request_quota"),
    ("GET", _QUOTA + r"/quotas", "list_quotas"),
    ("GET", _QUOTA + r"/usages/(?P<name>[^/]+)", "get_quota_usage"),
    ("GET", _QUOTA + r"/usages", "list_quota_usages"),
    ("GET", _QUOTA + r"/quotaRequests/(?P<id>[^/]+)", "get_quota_request"),
    ("GET", _QUOTA + r"/quotaRequests", "list_quota_requests"),
    ("GET", _QUOTA + r"/operationsStatus/(?P<id>[^/]+)", "get_quota_operation"),
    ("GET", _RG, "get_resource_group"),
]
_COMPILED = [(method, re.compile(f"^{pattern}/?$", re.IGNORECASE), op) for method, pattern, op in _TABLE]


@dataclass(frozen=True, slots=True)
class Route:
    op: str
    params: dict[str, str]


def match_route(method: str, path: str) -> Route | str | None:
    """The route for a request; ``"method"`` when the path exists for other methods; None when unknown."""
    known_path = False
    for route_method, pattern, op in _COMPILED:
        match = pattern.match(path)
        if match is None:
            continue
        if route_method == method:
            return Route(op, {k: v for k, v in match.groupdict().items() if v is not None})
        known_path = True
    return "method" if known_path else None
