"""``QuotaClient``: read a vCPU limit and ask for more through Microsoft.Quota.

Scope ``subscriptions/{sub}/providers/Microsoft.Compute/locations/{loc}``; quota names are
the usages API's (``cores``, ``lowPriorityCores``, ``standardDLSv5Family``). An increase is a
PUT that Azure answers ``202`` with a ``Location`` naming the request; ``request_increase``
returns at once with the request's id and state, and ``request_status(id)`` follows it
(``InProgress`` → ``Succeeded`` or ``Failed``). The CLI equivalent is
``az quota update --resource-name NAME --scope /subscriptions/…/locations/LOC --limit-object value=N``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from azure.core.exceptions import AzureError
from azure.mgmt.quota import QuotaMgmtClient

from provisioner.azure.clients import AzureClients, client_options, resolve_credential
from provisioner.azure.config import AzureConfig
from provisioner.azure.errors import map_error
from provisioner.azure.quota_reader import as_json

__all__ = ["QuotaClient", "QuotaLimit", "QuotaRequestStatus"]


@dataclass(frozen=True, slots=True)
class QuotaLimit:
    name: str
    limit: int
    unit: str = "Count"


@dataclass(frozen=True, slots=True)
class QuotaRequestStatus:
    id: str
    state: str  # Accepted | InProgress | Succeeded | Failed | Invalid
    quota: str = ""
    requested_limit: int | None = None
    message: str = ""

    @property
    def done(self) -> bool:
        return self.state in ("Succeeded", "Failed", "Invalid")

    @property
    def succeeded(self) -> bool:
        return self.state == "Succeeded"


class QuotaClient:
    def __init__(self, config: AzureConfig, clients: AzureClients | None = None) -> None:
        self.config = config
        self._owned = clients is None
        self._quota: Any = (
            clients.quota if clients is not None
            else QuotaMgmtClient(resolve_credential(config), config.subscription_id, **client_options(config))
        )

    def close(self) -> None:
        if self._owned:
            self._quota.close()

    def __enter__(self) -> QuotaClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def scope(self) -> str:
        return self.config.quota_scope

    def get_limit(self, name: str) -> QuotaLimit:
        try:
            quota = as_json(self._quota.quota.get(resource_name=name, scope=self.scope))
        except AzureError as e:
            raise map_error(e) from e
        props = quota.get("properties") or {}
        limit = props.get("limit") or {}
        return QuotaLimit(name=str((props.get("name") or {}).get("value") or name),
                          limit=int(limit.get("value") or 0), unit=str(props.get("unit") or "Count"))

    def request_increase(self, name: str, new_limit: int) -> QuotaRequestStatus:
        body = {"properties": {"name": {"value": name}, "limit": {"limitObjectType": "LimitValue", "value": new_limit}}}
        try:
            poller = self._quota.quota.begin_create_or_update(
                resource_name=name, scope=self.scope, create_quota_request=body, polling=False,
                cls=lambda response, deserialized, headers: response,
            )
            response = poller.result().http_response
        except AzureError as e:
            raise map_error(e) from e
        location = response.headers.get("Location") or ""
        request_id = urlparse(location).path.rstrip("/").rsplit("/", 1)[-1] if location else ""
        if response.status_code == 200 or not request_id:
            return QuotaRequestStatus(request_id, "Succeeded", name, new_limit)
        return self.request_status(request_id)

    def request_status(self, request_id: str) -> QuotaRequestStatus:
        try:
            details = as_json(self._quota.quota_request_status.get(id=request_id, scope=self.scope))
        except AzureError as e:
            raise map_error(e) from e
        return _status(request_id, details)


def _status(request_id: str, details: dict[str, Any]) -> QuotaRequestStatus:
    props = details.get("properties") or {}
    sub = (props.get("value") or [{}])[0]
    limit = (sub.get("limit") or {}).get("value")
    error = props.get("error") or {}
    return QuotaRequestStatus(
        id=str(details.get("name") or request_id),
        state=str(props.get("provisioningState") or sub.get("provisioningState") or ""),
        quota=str((sub.get("name") or {}).get("value") or ""),
        requested_limit=int(limit) if limit is not None else None,
        message=str(error.get("message") or props.get("message") or ""),
    )
