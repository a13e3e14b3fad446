"""The Microsoft.Quota API over the emulator's quota ledger.

Scope ``/subscriptions/{sub}/providers/Microsoft.Compute/locations/{loc}``. ``quotas``
reads limits (``properties.limit.value``), ``usages`` reads usage without limits, a PUT or
PATCH on ``quotas/{name}`` files an increase: ``202`` with a ``Location`` to poll (``202``
while in progress; ``200`` with the new limit once granted; ``400 QuotaRequestFailed`` when
rejected), and ``quotaRequests/{id}`` reports the request's state.
"""

from __future__ import annotations

from typing import Any

from sim.arm import messages
from sim.arm.ledger import QuotaRequest, localized_name
from sim.arm.messages import ArmFault
from sim.arm.state import ArmState

__all__ = ["QuotaApi"]

Result = tuple[int, dict[str, Any] | None, dict[str, str]]


class QuotaApi:
    def __init__(self, state: ArmState) -> None:
        self.state = state

    @property
    def scope(self) -> str:
        return f"/subscriptions/{self.state.subscription}/providers/Microsoft.Compute/locations/{self.state.location}"

    def act(self, op: str, params: dict[str, str], body: dict[str, Any], base_url: str, api: str,
            now: float) -> Result:
        ledger = self.state.ledger
        if op == "get_quota":
            return 200, self.limit_json(self._name(params["name"])), {}
        if op == "list_quotas":
            return 200, {"value": [self.limit_json(n) for n in ledger.names()]}, {}
        if op == "get_quota_usage":
            return 200, self.usage_json(self._name(params["name"])), {}
        if op == "list_quota_usages":
            return 200, {"value": [self.usage_json(n) for n in ledger.names()]}, {}
        if op == "request_quota":
            return self.request(self._name(params["name"]), body, base_url, api, now)
        if op == "get_quota_request":
            return 200, self.request_json(self._request(params["id"])), {}
        if op == "list_quota_requests":
            return 200, {"value": [self.request_json(r) for r in ledger.requests.values()]}, {}
        if op == "get_quota_operation":
            request = self._request(params["id"])
            if request.state == "InProgress":
                return 202, {"status": "InProgress"}, {"Location": self._location(request, base_url, api)}
            if request.state == "Failed":
                raise ledger.rejection(request)
            return 200, self.limit_json(request.name), {}
        raise messages.bad_request("UnsupportedOperation", f"The operation '{op}' is not supported.")

    def _name(self, name: str) -> str:
        for known in self.state.ledger.limits:
            if known.lower() == name.lower():
                return known
        raise ArmFault(
            400, "InvalidResourceName",
            f"The resource name '{name}' is not valid for scope '{self.scope}'. Use a quota name the usages "
            "API lists (cores, lowPriorityCores, standard…Family).",
        )

    def _request(self, request_id: str) -> QuotaRequest:
        request = self.state.ledger.requests.get(request_id)
        if request is None:
            raise messages.not_found("Microsoft.Quota/quotaRequests", request_id)
        return request

    def _location(self, request: QuotaRequest, base_url: str, api: str) -> str:
        return f"{base_url}{self.scope}/providers/Microsoft.Quota/operationsStatus/{request.id}?api-version={api}"

    def request(self, name: str, body: dict[str, Any], base_url: str, api: str, now: float) -> Result:
        props = body.get("properties") or {}
        limit = (props.get("limit") or {}) if isinstance(props, dict) else {}
        value = limit.get("value") if isinstance(limit, dict) else None
        if not isinstance(value, int) or isinstance(value, bool):
            raise messages.bad_request("InvalidRequestContent", "Required property 'properties.limit.value' is missing or not an integer.")
        request = self.state.ledger.request_increase(name, value, now)
        self.state.ledger.settle(now)
        headers = {"Location": self._location(request, base_url, api)}
        answer = self.limit_json(name)
        answer["properties"]["limit"]["value"] = value
        return 202, answer, headers

    def limit_json(self, name: str) -> dict[str, Any]:
        return {
            "id": f"{self.scope}/providers/Microsoft.Quota/quotas/{name}",
            "name": name,
            "type": "Microsoft.Quota/Quotas",
            "properties": {
                "limit": {"limitObjectType": "LimitValue", "value": self.state.ledger.limits[name], "limitType": "Independent"},
                "unit": "Count",
                "name": {"value": name, "localizedValue": localized_name(name)},
                "resourceType": "dedicated" if name != "lowPriorityCores" else "lowPriority",
                "quotaPeriod": "",
                "isQuotaApplicable": True,
                "properties": {},
            },
        }

    def usage_json(self, name: str) -> dict[str, Any]:
        return {
            "id": f"{self.scope}/providers/Microsoft.Quota/usages/{name}",
            "name": name,
            "type": "Microsoft.Quota/Usages",
            "properties": {
                "usages": {"value": self.state.usage().get(name, 0), "usagesType": "Individual"},
                "unit": "Count",
                "name": {"value": name, "localizedValue": localized_name(name)},
                "isQuotaApplicable": True,
            },
        }

    def request_json(self, request: QuotaRequest) -> dict[str, Any]:
        props: dict[str, Any] = {
            "provisioningState": request.state,
            "message": request.message,
            "requestSubmitTime": request.submitted.isoformat().replace("+00:00", "Z"),
            "value": [{
                "name": {"value": request.name, "localizedValue": localized_name(request.name)},
                "limit": {"limitObjectType": "LimitValue", "value": request.new_limit},
                "unit": "Count",
                "provisioningState": request.state,
                "message": request.message,
                "subRequestId": request.sub_request_id,
            }],
        }
        if request.state == "Failed":
            props["error"] = {"code": "QuotaRequestFailed", "message": request.message}
        return {
            "id": f"{self.scope}/providers/Microsoft.Quota/quotaRequests/{request.id}",
            "name": request.id,
            "type": "Microsoft.Quota/QuotaRequests",
            "properties": props,
        }
