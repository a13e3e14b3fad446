"""The error table: every message of Azure's catalog, as the SDK raises it, to its typed error."""

from __future__ import annotations

import json
from typing import Any

import pytest
from azure.core.exceptions import (
    ClientAuthenticationError,
    HttpResponseError,
    ResourceExistsError,
    ServiceRequestError,
    ServiceResponseError,
)

from provisioner.azure.errors import CATALOG, error_parts, map_error
from provisioner.model import errors as model

SUB = "6f1d2c3b-0a4e-4b7d-9c8f-5e2a1b0c9d8e"


class FakeResponse:
    """The bits of an azure-core HTTP response that HttpResponseError reads."""

    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self.status_code = status
        self.reason = "Reason"
        self.headers = headers or {}
        self._body = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.request = None

    def text(self, encoding: str | None = None) -> str:
        return self._body.decode()

    def body(self) -> bytes:
        return self._body

    def json(self) -> Any:
        return json.loads(self._body)


def sdk_error(status: int, code: str, message: str, headers: dict[str, str] | None = None,
              kind: type[HttpResponseError] = HttpResponseError) -> HttpResponseError:
    return kind(response=FakeResponse(status, {"error": {"code": code, "message": message}}, headers))


CASES: list[tuple[int, str, str, type[model.CloudError]]] = [
    (409, "OperationNotAllowed", "Operation could not be completed as it results in exceeding approved Total Regional "
     "Cores quota. Additional details - Deployment Model: Resource Manager, Location: westus2, Current Limit: 20, "
     "Current Usage: 14, Additional Required: 16, (Minimum) New Limit Required: 30. Submit a request for Quota "
     "increase at xxxxx by specifying parameters listed in the \u2018Details\u2019 section for deployment to succeed.",
     model.QuotaExceeded),
    (409, "OperationNotAllowed", "Operation could not be completed as it results in exceeding approved "
     "standardDASv5Family Cores quota. Additional details - Deployment Model: Resource Manager, Location: eastus, "
     "Current Limit: 100, Current Usage: 96, Additional Required: 64, (Minimum) New Limit Required: 160.",
     model.QuotaExceeded),
    (409, "OperationNotAllowed", "Operation could not be completed as it results in exceeding approved "
     "LowPriorityCores quota. Additional details - Deployment Model: Resource Manager, Location: eastus, Current "
     "Limit: 100, Current Usage: 100, Additional Required: 8, (Minimum) New Limit Required: 108.", model.QuotaExceeded),
    (409, "OperationNotAllowed", "Operation results in exceeding quota limits of Core. Maximum allowed: 10, Current "
     "in use: 10, Additional requested: 2. Please read more about quota increase at http://aka.ms/corequotaincrease.",
     model.QuotaExceeded),
    (409, "SkuNotAvailable", "The requested VM size for resource 'Following SKUs have failed for Capacity "
     "Restrictions: Standard_B2s' is currently not available in location 'eastus'. Please try another size or "
     "deploy to a different location or different zone. See https://aka.ms/azureskunotavailable for details.",
     model.SkuNotAvailable),
    (200, "AllocationFailed", "Allocation failed. We do not have sufficient capacity for the requested VM size in "
     "this region.", model.AllocationFailed),
    (200, "ZonalAllocationFailed", "Allocation failed. We do not have sufficient capacity for the requested VM size "
     "in this zone.", model.ZonalAllocationFailed),
    (200, "OverconstrainedAllocationRequest", "Allocation failed. VM(s) with the following constraints cannot be "
     "allocated, because the condition is too restrictive.", model.OverconstrainedAllocation),
    (200, "OverconstrainedZonalAllocationRequest", "Allocation failed. ... Constraints applied are:\n - Availability "
     "Zone\n", model.OverconstrainedAllocation),
    (400, "SubnetIsFull", "Subnet /subscriptions/x/subnets/one with address prefix 10.0.0.0/20 does not have enough "
     "capacity for 1 IP addresses", model.SubnetFull),
    (400, "PublicIPCountLimitReached", "Cannot create more than 20 public IP addresses for this subscription in this "
     "region.", model.PublicIPLimit),
    (400, "NicReservedForAnotherVm", "Nic(s) in request is reserved for another Virtual Machine for 180 seconds. "
     "Please provide another nic(s) or retry after 180 seconds. Reserved VM: /subscriptions/x", model.NicReserved),
    (429, "SubscriptionRequestsThrottled", "Number of requests for subscription 'x' and operation 'y' exceeded the "
     "backend storage limit. Please try again after '6' seconds.", model.Throttled),
    (403, "AuthorizationFailed", "The client 'c' with object id 'o' does not have authorization to perform action "
     "'Microsoft.Compute/virtualMachines/write' over scope '/subscriptions/x' or the scope is invalid.",
     model.AuthorizationFailed),
    (404, "PlatformImageNotFound", "The platform image 'Canonical:x:y:z' is not available. Verify that all fields in "
     "the storage profile are correct.", model.ImageNotFound),
    (400, "InvalidParameter", "The value B1ls provided for the VM size is not valid.", model.InvalidVmSize),
    (400, "VMSizeNotSupported", "Virtual Machine size: 'Standard_NC6' is not supported for subscription x in "
     "location 'westus'.", model.InvalidVmSize),
]


@pytest.mark.parametrize(("status", "code", "message", "expected"), CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_catalog_round_trip(status: int, code: str, message: str, expected: type[model.CloudError]) -> None:
    error = map_error(sdk_error(status, code, message))
    assert type(error) is expected
    assert (error.code, error.message, error.status) == (code, message, status)


def test_catalog_table_agrees_with_classify() -> None:
    codes = {case[1] for case in CASES}
    assert codes <= set(CATALOG)
    for status, code, message, _ in CASES:
        assert isinstance(map_error(sdk_error(status, code, message)), CATALOG[code])


def test_quota_numbers_survive_the_sdk() -> None:
    status, code, message, _ = CASES[1]
    error = map_error(sdk_error(status, code, message, kind=ResourceExistsError))
    assert isinstance(error, model.QuotaExceeded)
    assert (error.scope, error.quota, error.limit, error.usage, error.required, error.new_limit, error.region) == (
        "family", "standardDASv5Family", 100, 96, 64, 160, "eastus",
    )


def test_throttle_keeps_retry_after_from_the_header() -> None:
    error = map_error(sdk_error(429, "OperationNotAllowed", "The server rejected the request because too many "
                                "requests have been received for this subscription.", {"Retry-After": "1200"}))
    assert isinstance(error, model.Throttled) and error.retry_after == 1200


def test_unknown_codes_stay_verbatim() -> None:
    error = map_error(sdk_error(400, "SomethingNew", "A message nobody has seen.\nSecond line."))
    assert type(error) is model.UnknownCloudError
    assert (error.code, error.message) == ("SomethingNew", "A message nobody has seen.\nSecond line.")


def test_transport_and_credential_errors() -> None:
    assert isinstance(map_error(ServiceRequestError("Connection refused")), model.CloudUnavailable)
    assert isinstance(map_error(ServiceResponseError("Read timed out")), model.CloudUnavailable)
    assert map_error(ServiceResponseError("Read timed out")).code == "RequestTimeout"
    credential = map_error(ClientAuthenticationError("AzureCliCredential: Please run 'az login' to set up an account"))
    assert isinstance(credential, model.CredentialError) and "az login" in credential.message
    token_refused = map_error(sdk_error(401, "InvalidAuthenticationToken", "The access token is invalid."))
    assert isinstance(token_refused, model.CredentialError) and token_refused.status == 401
    unavailable = map_error(sdk_error(503, "ServiceUnavailable", "try later"))
    assert isinstance(unavailable, model.CloudUnavailable) and unavailable.status == 503


def test_error_parts_without_a_json_body() -> None:
    error = HttpResponseError(response=FakeResponse(502, b"<html>Bad Gateway</html>"))
    code, message, status, retry_after = error_parts(error)
    assert (code, status, retry_after) == ("", 502, None)
    assert message
    assert isinstance(map_error(error), model.CloudUnavailable)
