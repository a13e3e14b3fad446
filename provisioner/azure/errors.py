"""The one table from Azure SDK exceptions to karp's typed cloud errors.

::

    azure-core exception                          → typed error (provisioner.model.errors)
    ServiceRequestError / ServiceResponseError    → CloudUnavailable   (refused, dropped, timed out)
    ClientAuthenticationError without a response  → CredentialError    (no token: az login / workload identity)
    HttpResponseError 401                         → CredentialError    (token refused)
    HttpResponseError 500/502/503/504             → CloudUnavailable   (unless the code is in CATALOG)
    HttpResponseError, any other status           → classify(code, message, status, Retry-After)
        (sync errors carry the PUT's status; async ones, raised from a long-running
        operation's Failed status, carry 200: the code decides)
    any other AzureError                          → UnknownCloudError(type name, text)

``CATALOG`` lists the codes of Azure's error catalog and the class each becomes; codes
not in it keep their code and message verbatim as ``UnknownCloudError``. Callers write
``raise map_error(e) from e``.
"""

from __future__ import annotations

from typing import Any

from azure.core.exceptions import (
    AzureError,
    ClientAuthenticationError,
    HttpResponseError,
    ServiceRequestError,
    ServiceResponseError,
)

from provisioner.model import errors as model
from provisioner.model.errors import CloudError, CloudUnavailable, CredentialError, classify

__all__ = ["CATALOG", "error_parts", "map_error"]

CATALOG: dict[str, type[CloudError]] = {
    "OperationNotAllowed": model.QuotaExceeded,  # with the quota numbers; 429 ones become Throttled
    "SkuNotAvailable": model.SkuNotAvailable,
    "AllocationFailed": model.AllocationFailed,
    "ZonalAllocationFailed": model.ZonalAllocationFailed,
    "OverconstrainedAllocationRequest": model.OverconstrainedAllocation,
    "OverconstrainedZonalAllocationRequest": model.OverconstrainedAllocation,
    "SubnetIsFull": model.SubnetFull,
    "InsufficientSubnetSize": model.SubnetFull,
    "PublicIPCountLimitReached": model.PublicIPLimit,
    "NicReservedForAnotherVm": model.NicReserved,
    "TooManyRequests": model.Throttled,
    "SubscriptionRequestsThrottled": model.Throttled,
    "AuthorizationFailed": model.AuthorizationFailed,
    "LinkedAuthorizationFailed": model.AuthorizationFailed,
    "PlatformImageNotFound": model.ImageNotFound,
    "InvalidParameter": model.InvalidVmSize,  # when about the VM size
    "VMSizeNotSupported": model.InvalidVmSize,
}
_UNAVAILABLE = (500, 502, 503, 504)
_CREDENTIAL_HINT = (
    "no Azure access token could be obtained: run 'az login' (laptop), or give the pod workload identity "
    "(AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE)"
)


def _retry_after(response: Any) -> float | None:
    headers = getattr(response, "headers", None) or {}
    value = headers.get("Retry-After") or headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


def error_parts(e: HttpResponseError) -> tuple[str, str, int | None, float | None]:
    """Azure's (code, message, HTTP status, Retry-After seconds) from an SDK HTTP error."""
    code = message = ""
    odata = getattr(e, "error", None)
    if odata is not None:
        code = str(getattr(odata, "code", "") or "")
        message = str(getattr(odata, "message", "") or "")
    response = getattr(e, "response", None)
    if not code and response is not None:
        try:
            body = response.json()
        except Exception:  # not JSON: keep the SDK's own text
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            code = str(error.get("code") or "")
            message = str(error.get("message") or "")
    if not message:
        message = str(getattr(e, "message", "") or e)
    status = getattr(e, "status_code", None)
    return code, message, status, _retry_after(response)


def map_error(e: BaseException) -> CloudError:
    """The typed error for an exception raised by an Azure SDK call."""
    if isinstance(e, CloudError):
        return e
    if isinstance(e, ServiceRequestError | ServiceResponseError):
        kind = "RequestTimeout" if "timeout" in type(e).__name__.lower() or "timed out" in str(e).lower() else "ConnectionError"
        return CloudUnavailable(kind, f"Azure Resource Manager did not answer: {_first_line(e)}")
    if isinstance(e, ClientAuthenticationError) and getattr(e, "response", None) is None:
        return CredentialError("CredentialUnavailable", f"{_CREDENTIAL_HINT} ({_first_line(e)})")
    if isinstance(e, HttpResponseError):
        code, message, status, retry_after = error_parts(e)
        if status == 401:
            return CredentialError(code or "AuthenticationFailed", message, status)
        if status in _UNAVAILABLE and code not in CATALOG:
            return CloudUnavailable(code or f"HTTP{status}", message, status)
        return classify(code, message, status, retry_after)
    if isinstance(e, AzureError):
        return model.UnknownCloudError(type(e).__name__, _first_line(e))
    return model.UnknownCloudError(type(e).__name__, _first_line(e))


def _first_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]
