"""Live vCPU quota from the compute usages API, as a ``QuotaSnapshot`` (``source="azure"``).

One call (``GET …/providers/Microsoft.Compute/locations/{loc}/usages``) gives usage and limit
of the regional ``cores`` quota, every family quota (``standard…Family``) and the spot
``lowPriorityCores`` quota; the other counters it returns (availability sets, VM counts,
disks) are not vCPU quotas and are left out. ``read_live_quota`` is what ``karp-diagnose
--azure`` calls: it raises a typed ``CloudError`` (``AuthorizationFailed``,
``CredentialError``, ``CloudUnavailable``, …) whose message is meant for the user, never a
traceback.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from azure.core.exceptions import AzureError
from azure.mgmt.compute import ComputeManagementClient

from provisioner.azure.clients import client_options, resolve_credential
from provisioner.azure.config import AzureConfig
from provisioner.azure.errors import map_error
from provisioner.model.quota import REGIONAL_QUOTA, SPOT_QUOTA, QuotaSnapshot, QuotaUsage

__all__ = ["LiveQuotaSource", "diagnose_quota_source", "is_vcpu_quota", "read_live_quota", "snapshot_from_usages"]


def as_json(model: Any) -> dict[str, Any]:
    """An SDK model as Azure's JSON (camelCase keys)."""
    if isinstance(model, dict):
        return model
    as_dict = getattr(model, "as_dict", None)
    if callable(as_dict):
        result: dict[str, Any] = as_dict()
        return result
    return dict(model)


def is_vcpu_quota(name: str) -> bool:
    return name in (REGIONAL_QUOTA, SPOT_QUOTA) or (name.lower().startswith("standard") and name.endswith("Family"))


def snapshot_from_usages(region: str, usages: Iterable[dict[str, Any]], read_at: datetime | None = None) -> QuotaSnapshot:
    items: dict[str, QuotaUsage] = {}
    for usage in usages:
        name_field = usage.get("name") or {}
        name = str(name_field.get("value") or "")
        if not is_vcpu_quota(name):
            continue
        items[name] = QuotaUsage(
            name=name,
            limit=int(usage.get("limit") or 0),
            usage=int(usage.get("currentValue") or 0),
            localized_name=str(name_field.get("localizedValue") or ""),
        )
    return QuotaSnapshot(region=region, read_at=read_at or datetime.now(UTC), source="azure", items=items)


def read_usages(compute: Any, config: AzureConfig) -> QuotaSnapshot:
    """Read the usages API through a compute client; typed errors only."""
    try:
        usages = [as_json(u) for u in compute.usage.list(config.location)]
    except AzureError as e:
        raise map_error(e) from e
    return snapshot_from_usages(config.location, usages)


def read_live_quota(config: AzureConfig) -> QuotaSnapshot:
    """Every vCPU quota of ``config``'s subscription in ``config.location``, read now."""
    try:
        credential = resolve_credential(config)
    except Exception as e:  # azure-identity fails to build: no usable environment
        raise map_error(e) from e
    compute = ComputeManagementClient(credential, config.subscription_id, **client_options(config))
    try:
        return read_usages(compute, config)
    finally:
        compute.close()


class LiveQuotaSource:
    """diagnose's ``QuotaSource`` port over the live usages API: ``read(region)``."""

    def __init__(self, config: AzureConfig) -> None:
        self.config = config

    def read(self, region: str) -> QuotaSnapshot:
        config = self.config
        if region and region != config.location:
            config = replace(config, location=region)
        return read_live_quota(config)

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def diagnose_quota_source(*, subscription: str, location: str, endpoint: str = "", ca: str = "") -> LiveQuotaSource:
    """The live ``QuotaSource`` behind ``karp-diagnose --azure``.

    The subscription comes from ``--subscription`` or ``AZURE_SUBSCRIPTION_ID``; the region from
    ``--location`` or, per finding, from the log. Against Azure the credential is
    ``DefaultAzureCredential`` (``az login``, workload identity); an ``--azure-endpoint`` on the
    loopback address is a local stand-in (``karp-sim arm``) that accepts any token, so no real
    credential is looked for there.
    """
    import os
    from urllib.parse import urlparse

    from provisioner.azure.credentials import StaticCredential
    from provisioner.model.errors import InputError

    subscription = subscription or os.environ.get("AZURE_SUBSCRIPTION_ID", "")
    if not subscription:
        raise InputError("--azure needs a subscription: pass --subscription ID or set AZURE_SUBSCRIPTION_ID")
    if ca and not os.path.isfile(ca):
        raise InputError(f"--azure-ca {ca}: no such file")
    credential: Any | None = None
    if endpoint:
        host = urlparse(endpoint).hostname or ""
        if not urlparse(endpoint).scheme.startswith("http") or not host:
            raise InputError(f"--azure-endpoint {endpoint!r}: not an https URL")
        if host in _LOOPBACK_HOSTS or host.startswith("127."):
            credential = StaticCredential()
    config = AzureConfig(
        subscription_id=subscription,
        resource_group="-",  # the usages API needs none
        location=location or "westus2",
        endpoint=endpoint or None,
        ca_cert=ca or None,
        credential=credential,
        polling_interval=0.0 if endpoint else 5.0,
        timeout=20.0,
        max_retries=2,
    )
    return LiveQuotaSource(config)
