"""The emulator's request handling: route, log, inject faults, act on the state, answer.

``ArmService.handle`` takes a parsed request and returns an ``ArmResponse`` (status,
JSON body, headers, or an instruction to hold back or drop the answer). It knows nothing
of sockets, so it can be driven directly in unit tests.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs

from sim.arm import messages
from sim.arm.faults import ASYNC_KINDS, KINDS, VM_CREATE_KINDS, FaultPlan, FaultRule
from sim.arm.messages import ArmFault
from sim.arm.resources import ResourceApi
from sim.arm.routes import Route, match_route
from sim.arm.skus import SkuTable
from sim.arm.state import ArmState

__all__ = ["ArmRequest", "ArmResponse", "ArmService", "RequestRecord"]

_SYNC_KINDS = tuple(k for k in KINDS if k not in ASYNC_KINDS and k not in VM_CREATE_KINDS)
_ANSWERED_AT_ONCE = ("slow", "drop", "throttle", "server_error")
_RESOURCE = {"create_vm": "Microsoft.Compute", "delete_vm": "Microsoft.Compute", "create_nic": "Microsoft.Network"}
_GROUPS = {"create_vm": "PutVM3Min", "delete_vm": "DeleteVM3Min", "get_usages": "GetSubscriptionUsages3Min"}


@dataclass(frozen=True, slots=True)
class ArmRequest:
    method: str
    path: str  # with the query string
    body: bytes = b""
    authorization: str = ""
    base_url: str = ""  # https://host:port, for absolute operation URLs


@dataclass(slots=True)
class ArmResponse:
    status: int
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drop: bool = False


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as the emulator saw it (never the token: only whether there was one)."""

    at: datetime
    method: str
    path: str
    op: str
    status: int
    api_version: str
    authenticated: bool
    fault: str = ""
    sku: str = ""
    zone: str = ""
    error_code: str = ""


class ArmService:
    def __init__(self, state: ArmState, skus: SkuTable, faults: FaultPlan,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.state = state
        self.skus = skus
        self.faults = faults
        self.clock = clock
        self.lock = threading.RLock()
        self.log: list[RequestRecord] = []
        self.denied: set[str] = set()  # operations answered with 403 AuthorizationFailed
        self.resources = ResourceApi(state, skus)

    # --- the clock ---------------------------------------------------------------------
    def settle(self) -> None:
        with self.lock:
            calls = self.state.settle(self.clock())
        for call in calls:
            call()

    def next_due(self) -> float | None:
        with self.lock:
            dues = [op.due for op in self.state.pending.values()]
            dues += [r.due for r in self.state.ledger.requests.values() if r.state == "InProgress"]
        return min(dues) if dues else None

    # --- requests ----------------------------------------------------------------------
    def handle(self, request: ArmRequest) -> ArmResponse:
        path, _, query_string = request.path.partition("?")
        query = {k: v[0] for k, v in parse_qs(query_string, keep_blank_values=True).items()}
        api_version = query.get("api-version", "")
        route = match_route(request.method, path)
        op = route.op if isinstance(route, Route) else "unknown"
        sku = zone = fault = ""
        try:
            response, sku, zone, fault = self._dispatch(request, route, query)
        except ArmFault as error:
            response = ArmResponse(error.status, error.body(), dict(error.headers))
        except Exception as error:  # a defect here must still come back as Azure would say it
            fault_500 = ArmFault(500, "InternalServerError", f"The emulator failed on this request: {error!r}")
            response = ArmResponse(500, fault_500.body())
        self.settle()
        code = ""
        if response.body and isinstance(response.body.get("error"), dict):
            code = str(response.body["error"].get("code", ""))
        record = RequestRecord(
            datetime.now(UTC), request.method, path, op, 0 if response.drop else response.status, api_version,
            request.authorization.lower().startswith("bearer "), fault, sku, zone, code,
        )
        with self.lock:
            self.log.append(record)
        response.headers.setdefault("x-ms-request-id", str(uuid.uuid4()))
        return response

    def _dispatch(self, request: ArmRequest, route: Route | str | None,
                  query: dict[str, str]) -> tuple[ArmResponse, str, str, str]:
        if route is None:
            raise ArmFault(404, "NotFound", f"The requested resource path '{request.path.partition('?')[0]}' was not found.")
        if route == "method":
            raise ArmFault(405, "MethodNotAllowed", f"The HTTP method '{request.method}' is not supported for this resource.")
        assert isinstance(route, Route)
        if not request.authorization.lower().startswith("bearer "):
            raise ArmFault(401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.")
        if not query.get("api-version"):
            raise messages.bad_request(
                "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests."
            )
        self._check_scope(route)
        body = self._body(request) if request.method in ("PUT", "PATCH") else {}
        sku, zone = _sku_and_zone(route.op, body)
        kinds = KINDS if route.op == "create_vm" else _SYNC_KINDS
        rule = self.faults.draw(route.op, sku, zone, kinds)
        delay = 0.0
        if rule is not None and rule.kind == "slow":
            delay = rule.delay_s
        elif rule is not None and rule.kind in _ANSWERED_AT_ONCE:
            return self._fault_response(route.op, rule), sku, zone, rule.kind
        if route.op in self.denied:
            raise _authorization_failed(route.op, self.state)
        response = self._act(route, body, query, rule, request.base_url)
        response.delay_s = delay
        return response, sku, zone, rule.kind if rule else ""

    def _check_scope(self, route: Route) -> None:
        sub = route.params.get("sub", "")
        if sub.lower() != self.state.subscription.lower():
            raise ArmFault(404, "SubscriptionNotFound", f"The subscription '{sub}' could not be found.")
        group = route.params.get("rg")
        if group is not None and group.lower() != self.state.resource_group.lower():
            raise ArmFault(404, "ResourceGroupNotFound", f"Resource group '{group}' could not be found.")
        location = route.params.get("loc")
        if location is not None and location.lower() != self.state.location.lower():
            raise ArmFault(
                404, "LocationNotFound" if "quota" not in route.op else "ResourceNotFound",
                f"The location '{location}' is not served here (this emulator serves '{self.state.location}').",
            )

    @staticmethod
    def _body(request: ArmRequest) -> dict[str, Any]:
        if not request.body:
            raise messages.bad_request("InvalidRequestContent", "The request content was invalid and could not be deserialized: the body is empty.")
        try:
            body = json.loads(request.body)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise messages.bad_request(
                "InvalidRequestContent", f"The request content was invalid and could not be deserialized: {e}."
            ) from e
        if not isinstance(body, dict):
            raise messages.bad_request("InvalidRequestContent", "The request content was invalid and could not be deserialized: expected a JSON object.")
        return body

    def _fault_response(self, op: str, rule: FaultRule) -> ArmResponse:
        if rule.kind == "drop":
            return ArmResponse(0, drop=True)
        if rule.kind == "throttle":
            error = messages.throttled(_GROUPS.get(op, "HighCostGet3Min"), rule.retry_after, _RESOURCE.get(op, "Microsoft.Compute"))
        elif rule.status == 503:
            error = messages.service_unavailable()
        else:
            error = messages.internal_error()
            error.status = rule.status
        return ArmResponse(error.status, error.body(), dict(error.headers))

    def _act(self, route: Route, body: dict[str, Any], query: dict[str, str], rule: FaultRule | None,
             base_url: str) -> ArmResponse:
        now = self.clock()
        with self.lock:
            calls = self.state.settle(now)
            status, payload, headers = self.resources.act(route, body, query, rule, base_url, now)
        for call in calls:  # VM hooks run outside the lock, and none is ever dropped
            call()
        return ArmResponse(status, payload, headers)


def _sku_and_zone(op: str, body: dict[str, Any]) -> tuple[str, str]:
    if op != "create_vm":
        return "", ""
    props = body.get("properties") or {}
    size = str((props.get("hardwareProfile") or {}).get("vmSize") or "") if isinstance(props, dict) else ""
    zones = body.get("zones") or []
    return size, str(zones[0]) if isinstance(zones, list) and zones else ""


_ACTIONS = {
    "create_vm": "Microsoft.Compute/virtualMachines/write",
    "get_vm": "Microsoft.Compute/virtualMachines/read",
    "list_vms": "Microsoft.Compute/virtualMachines/read",
    "delete_vm": "Microsoft.Compute/virtualMachines/delete",
    "create_nic": "Microsoft.Network/networkInterfaces/write",
    "delete_nic": "Microsoft.Network/networkInterfaces/delete",
    "get_usages": "Microsoft.Compute/locations/usages/read",
    "list_skus": "Microsoft.Compute/skus/read",
    "get_quota": "Microsoft.Quota/quotas/read",
    "request_quota": "Microsoft.Quota/quotas/write",
}


def _authorization_failed(op: str, state: ArmState) -> ArmFault:
    action = _ACTIONS.get(op, f"Microsoft.Compute/{op}")
    return ArmFault(
        403,
        "AuthorizationFailed",
        "The client '00000000-0000-0000-0000-00000000c11e' with object id '00000000-0000-0000-0000-00000000c11e' "
        f"does not have authorization to perform action '{action}' over scope '/subscriptions/{state.subscription}"
        f"/resourceGroups/{state.resource_group}' or the scope is invalid. If access was recently granted, please "
        "refresh your credentials.",
    )
