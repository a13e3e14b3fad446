"""One error hierarchy for everything that can go wrong with the cloud.

::

    KarpError
    ├── InputError                      bad user input (a file, a flag, a manifest)
    ├── ConfigError(setting)            a setting that fails validation
    └── CloudError(code, message, status)   Azure refused or failed an operation
        ├── QuotaExceeded(scope, quota, limit, usage, required, new_limit, region)
        ├── SkuNotAvailable(sku, region, zones)
        ├── AllocationFailed(zone)
        │   └── ZonalAllocationFailed(zone)
        ├── OverconstrainedAllocation(zonal)
        ├── SubnetFull(subnet, prefix)
        ├── PublicIPLimit(limit)
        ├── NicReserved(retry_after)
        ├── Throttled(retry_after)
        ├── AuthorizationFailed(action, scope)
        ├── ImageNotFound(image)
        ├── InvalidVmSize(sku)
        ├── CloudUnavailable                no answer: connection refused or dropped, timeout, 5xx
        ├── CredentialError                 no token could be had (az login, workload identity)
        └── UnknownCloudError               code and message kept verbatim

``classify(code, message, status)`` turns Azure's (code, message) pair into one of these.
It is pure text work, shared by the Azure adapter (which maps SDK exceptions through it)
and by karp-diagnose (which meets the same pair inside log lines). Every class names the
diagnosis ``category`` it belongs to; only the controller decides retry versus give up.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import ClassVar

__all__ = [
    "AllocationFailed",
    "AuthorizationFailed",
    "CloudError",
    "CloudUnavailable",
    "ConfigError",
    "CredentialError",
    "ImageNotFound",
    "InputError",
    "InvalidVmSize",
    "KarpError",
    "NicReserved",
    "OverconstrainedAllocation",
    "PublicIPLimit",
    "QuotaExceeded",
    "QuotaScope",
    "SkuNotAvailable",
    "SubnetFull",
    "Throttled",
    "UnknownCloudError",
    "ZonalAllocationFailed",
    "classify",
    "describe_quota_block",
    "parse_quota_message",
]


class KarpError(Exception):
    """Root of every error this project raises on purpose."""


class InputError(KarpError):
    """Input that cannot be used; the message names the input and what is wrong."""


class ConfigError(KarpError):
    def __init__(self, setting: str, problem: str) -> None:
        super().__init__(f"setting {setting}: {problem}")
        self.setting = setting
        self.problem = problem


class CloudError(KarpError):
    """Azure refused or failed an operation. ``code`` and ``message`` are Azure's, verbatim."""

    category: ClassVar[str] = "launch-failed"

    def __init__(self, code: str, message: str, status: int | None = None) -> None:
        super().__init__(f"({code}) {message}" if code else message)
        self.code = code
        self.message = message
        self.status = status


class QuotaScope:
    """Which quota a QuotaExceeded is about."""

    REGIONAL = "regional"
    FAMILY = "family"
    SPOT = "spot"


@dataclass(frozen=True, slots=True)
class QuotaNumbers:
    scope: str
    quota: str  # the quota's name: "cores", "standardDASv5Family", "lowPriorityCores"
    limit: int
    usage: int
    required: int
    new_limit: int
    region: str


class QuotaExceeded(CloudError):
    def __init__(self, code: str, message: str, status: int | None, numbers: QuotaNumbers) -> None:
        super().__init__(code, message, status)
        self.scope = numbers.scope
        self.quota = numbers.quota
        self.limit = numbers.limit
        self.usage = numbers.usage
        self.required = numbers.required
        self.new_limit = numbers.new_limit
        self.region = numbers.region

    @property
    def category(self) -> str:  # type: ignore[override]
        return {
            QuotaScope.REGIONAL: "regional-vcpu-quota",
            QuotaScope.FAMILY: "family-vcpu-quota",
            QuotaScope.SPOT: "spot-vcpu-quota",
        }[self.scope]

    @property
    def headroom(self) -> int:
        return max(self.limit - self.usage, 0)


class SkuNotAvailable(CloudError):
    category: ClassVar[str] = "sku-not-available"

    def __init__(self, code: str, message: str, status: int | None, sku: str, region: str, zones: str) -> None:
        super().__init__(code, message, status)
        self.sku = sku
        self.region = region
        self.zones = zones


class AllocationFailed(CloudError):
    category: ClassVar[str] = "allocation-failed"

    def __init__(self, code: str, message: str, status: int | None = None, zone: str = "") -> None:
        super().__init__(code, message, status)
        self.zone = zone


class ZonalAllocationFailed(AllocationFailed):
    category: ClassVar[str] = "zonal-allocation-failed"


class OverconstrainedAllocation(CloudError):
    category: ClassVar[str] = "overconstrained-allocation"

    def __init__(self, code: str, message: str, status: int | None = None, zonal: bool = False) -> None:
        super().__init__(code, message, status)
        self.zonal = zonal


class SubnetFull(CloudError):
    category: ClassVar[str] = "subnet-full"

    def __init__(self, code: str, message: str, status: int | None, subnet: str, prefix: str) -> None:
        super().__init__(code, message, status)
        self.subnet = subnet
        self.prefix = prefix


class PublicIPLimit(CloudError):
    category: ClassVar[str] = "public-ip-limit"

    def __init__(self, code: str, message: str, status: int | None, limit: int | None) -> None:
        super().__init__(code, message, status)
        self.limit = limit


class NicReserved(CloudError):
    category: ClassVar[str] = "nic-reserved"

    def __init__(self, code: str, message: str, status: int | None, retry_after: int) -> None:
        super().__init__(code, message, status)
        self.retry_after = retry_after


class Throttled(CloudError):
    category: ClassVar[str] = "throttled"

    def __init__(self, code: str, message: str, status: int | None, retry_after: float) -> None:
        super().__init__(code, message, status)
        self.retry_after = retry_after


class AuthorizationFailed(CloudError):
    category: ClassVar[str] = "authorization-failed"

    def __init__(self, code: str, message: str, status: int | None, action: str, scope: str) -> None:
        super().__init__(code, message, status)
        self.action = action
        self.scope = scope


class ImageNotFound(CloudError):
    category: ClassVar[str] = "image-not-found"

    def __init__(self, code: str, message: str, status: int | None, image: str) -> None:
        super().__init__(code, message, status)
        self.image = image


class InvalidVmSize(CloudError):
    category: ClassVar[str] = "invalid-vm-size"

    def __init__(self, code: str, message: str, status: int | None, sku: str) -> None:
        super().__init__(code, message, status)
        self.sku = sku


class CloudUnavailable(CloudError):
    """Azure could not be reached or did not answer in time (transient; retry later)."""

    category: ClassVar[str] = "launch-failed"  # a transient failure to reach Azure


class CredentialError(CloudError):
    """No access token could be obtained: not logged in, or workload identity not set up."""

    category: ClassVar[str] = "authorization-failed"  # no usable credential


class UnknownCloudError(CloudError):
    category: ClassVar[str] = "unknown-error"


_NUMBERS = re.compile(
    r"Current Limit:\s*(\d+),\s*Current Usage:\s*(\d+),\s*Additional Required:\s*(\d+),\s*"
    r"\(Minimum\) New Limit Required:\s*(\d+)"
)
_LEGACY = re.compile(r"Maximum allowed:\s*(\d+),\s*Current in use:\s*(\d+),\s*Additional requested:\s*(\d+)")
_LOCATION = re.compile(r"Location:\s*([^,.\s]+)")
_APPROVED = re.compile(r"exceeding approved\s+(.+?)\s+quota", re.IGNORECASE)
_SKU_RESOURCE = re.compile(r"Capacity Restrictions:\s*([\w-]+)")
_SKU_SIZE = re.compile(r"size[^']*'([^']*)'", re.IGNORECASE)
_IN_LOCATION = re.compile(r"in location '([^']*)'")
_ZONES = re.compile(r"zones '([^']*)'")
_SUBNET = re.compile(r"Subnet\s+(\S+)\s+with address prefix\s+(\S+)")
_AKS_SUBNET = re.compile(r"Subnet Cidr\s+([^,\s]+)(?:,\s*Subnet Name\s+([^.,\s]+))?")
_PUBLIC_IPS = re.compile(r"more than (\d+) public IP")
_RETRY_SECONDS = re.compile(r"(?:retry after|try again after)\s*'?(\d+)'?\s*seconds", re.IGNORECASE)
_AUTH = re.compile(r"perform action '([^']*)' over scope '([^']*)'")
_IMAGE = re.compile(r"image '([^']*)'")
_VM_SIZE = re.compile(r"(?:value|size:?)\s+'?(Standard_\w+|[A-Z]\w+)'?\s+(?:provided|is not)", re.IGNORECASE)


_KARP_WORDING = re.compile(
    r"(regional vCPU quota|vCPU quota of family|family vCPU quota|spot vCPU quota) (\S+) in ([\w-]+): limit (\d+), usage (\d+)"
    r"(?: \(\+\d+ being created\))?, (?:\d+ left, )?(\d+) more needed.*?a limit of (?:at least )?(\d+)"
)
_KARP_SCOPES = {"regional vCPU quota": QuotaScope.REGIONAL, "vCPU quota of family": QuotaScope.FAMILY,
                "family vCPU quota": QuotaScope.FAMILY, "spot vCPU quota": QuotaScope.SPOT}


_KARP_LABELS = {QuotaScope.REGIONAL: "regional vCPU quota", QuotaScope.FAMILY: "vCPU quota of family",
                QuotaScope.SPOT: "spot vCPU quota"}


def describe_quota_block(scope: str, name: str, region: str, limit: int, usage: int, required: int,
                         new_limit: int, *, left: int | None = None, in_flight: int = 0, size: str = "",
                         would: str = "place them") -> str:
    """karp-provisioner's wording for a quota that blocks pods or refused a create (its Events and log
    lines use it; ``parse_quota_message`` reads it back): "regional vCPU quota cores in westus2: limit 20,
    usage 14, 6 left, 8 more needed; a limit of 28 would place them"."""
    creating = f" (+{in_flight} being created)" if in_flight else ""
    remaining = f", {left} left" if left is not None else ""
    needed = f"{required} more needed" + (f" for {size}" if size else "")
    return (f"{_KARP_LABELS.get(scope, 'vCPU quota')} {name} in {region}: limit {limit}, usage {usage}{creating}"
            f"{remaining}, {needed}; a limit of {new_limit} would {would}")


@functools.lru_cache(maxsize=1024)  # a log repeats the same refusal thousands of times
def parse_quota_message(message: str) -> QuotaNumbers | None:
    """The numbers of a vCPU quota refusal, in Azure's current or legacy wording, or in the
    wording karp-provisioner's own Events and log lines use for a quota that blocks pods
    ("regional vCPU quota cores in westus2: limit 20, usage 14, 6 left, 8 more needed; a limit
    of 28 would place them")."""
    karp = _KARP_WORDING.search(message)
    if karp:
        label, name, region, limit, usage, required, new_limit = karp.groups()
        return QuotaNumbers(_KARP_SCOPES[label], name, int(limit), int(usage), int(required), int(new_limit), region)
    location_match = _LOCATION.search(message)
    region = location_match.group(1) if location_match else ""
    match = _NUMBERS.search(message)
    if match:
        limit, usage, required, new_limit = (int(g) for g in match.groups())
        approved = _APPROVED.search(message)
        name = approved.group(1).strip() if approved else ""
        lowered = name.lower()
        if "lowpriority" in lowered.replace(" ", "") or "spot" in lowered:
            return QuotaNumbers(QuotaScope.SPOT, "lowPriorityCores", limit, usage, required, new_limit, region)
        if "regional" in lowered or lowered in ("cores", "total cores"):
            return QuotaNumbers(QuotaScope.REGIONAL, "cores", limit, usage, required, new_limit, region)
        family = name.removesuffix(" Cores").strip()
        return QuotaNumbers(QuotaScope.FAMILY, family, limit, usage, required, new_limit, region)
    legacy = _LEGACY.search(message)
    if legacy:
        limit, usage, required = (int(g) for g in legacy.groups())
        return QuotaNumbers(QuotaScope.REGIONAL, "cores", limit, usage, required, usage + required, region)
    return None


def _first(pattern: re.Pattern[str], text: str, default: str = "") -> str:
    match = pattern.search(text)
    return match.group(1) if match else default


def classify(code: str, message: str, status: int | None = None, retry_after: float | None = None) -> CloudError:
    """Map Azure's error code and message (and HTTP status) onto the typed hierarchy."""
    code = code or ""
    lowered = message.lower()
    if code == "OperationNotAllowed" or "quota" in lowered:
        numbers = parse_quota_message(message)
        if numbers is not None:
            return QuotaExceeded(code, message, status, numbers)
    if status == 429 or code in ("TooManyRequests", "SubscriptionRequestsThrottled") or "too many requests" in lowered:
        seconds = retry_after if retry_after is not None else float(_first(_RETRY_SECONDS, message, "0") or 0)
        return Throttled(code, message, status, seconds)
    if code == "SkuNotAvailable":
        sku = _first(_SKU_RESOURCE, message) or _first(_SKU_SIZE, message)
        if sku.startswith("/"):  # the older wording names the VM resource, not the size
            sku = ""
        return SkuNotAvailable(code, message, status, sku, _first(_IN_LOCATION, message), _first(_ZONES, message))
    if code == "ZonalAllocationFailed":
        return ZonalAllocationFailed(code, message, status)
    if code in ("AllocationFailed", "AllocationFailure"):
        return AllocationFailed(code, message, status)
    if code in ("OverconstrainedAllocationRequest", "OverconstrainedZonalAllocationRequest"):
        zonal = "Zonal" in code or "availability zone" in lowered
        return OverconstrainedAllocation(code, message, status, zonal)
    if code in ("SubnetIsFull", "InsufficientSubnetSize") or "does not have enough capacity for" in lowered:
        match = _SUBNET.search(message)
        if match is None and (aks := _AKS_SUBNET.search(message)) is not None:
            return SubnetFull(code, message, status, aks.group(2) or "", aks.group(1))
        return SubnetFull(code, message, status, match.group(1) if match else "", match.group(2) if match else "")
    if code == "PublicIPCountLimitReached":
        count = _first(_PUBLIC_IPS, message)
        return PublicIPLimit(code, message, status, int(count) if count else None)
    if code == "NicReservedForAnotherVm":
        return NicReserved(code, message, status, int(_first(_RETRY_SECONDS, message, "180") or 180))
    if code in ("AuthorizationFailed", "LinkedAuthorizationFailed") or status == 403:
        match = _AUTH.search(message)
        return AuthorizationFailed(code, message, status, match.group(1) if match else "", match.group(2) if match else "")
    if code in ("PlatformImageNotFound", "ImageNotFound", "GalleryImageNotFound") or (
        "image" in lowered and "not" in lowered and "found" in lowered
    ):
        return ImageNotFound(code, message, status, _first(_IMAGE, message))
    if code in ("VMSizeNotSupported", "InvalidVMSize") or (
        code == "InvalidParameter" and "vm size" in lowered and ("not valid" in lowered or "not supported" in lowered)
    ):
        return InvalidVmSize(code, message, status, _first(_VM_SIZE, message))
    return UnknownCloudError(code, message, status)
