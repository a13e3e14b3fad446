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

__all__ = ["LiveQuotaSource", "is_vcpu_quota", "read_live_quota", "snapshot_from_usages"]


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
