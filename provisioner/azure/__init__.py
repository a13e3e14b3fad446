"""The Azure layer: the only code that imports the Azure SDKs.

``AzureCompute`` (the ``Compute`` port), ``QuotaClient`` (Microsoft.Quota), ``read_live_quota``
(for karp-diagnose), all configured by one ``AzureConfig``; SDK errors leave this package
only as ``provisioner.model.errors`` types (see ``provisioner.azure.errors``).
"""

from __future__ import annotations

from provisioner.azure.compute import AzureCompute, VmCreation
from provisioner.azure.config import AzureConfig
from provisioner.azure.credentials import StaticCredential
from provisioner.azure.quota_client import QuotaClient, QuotaLimit, QuotaRequestStatus
from provisioner.azure.quota_reader import LiveQuotaSource, diagnose_quota_source, read_live_quota

__all__ = [
    "AzureCompute",
    "AzureConfig",
    "LiveQuotaSource",
    "QuotaClient",
    "QuotaLimit",
    "QuotaRequestStatus",
    "StaticCredential",
    "VmCreation",
    "diagnose_quota_source",
    "read_live_quota",
]
