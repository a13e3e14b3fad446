"""Where and how the Azure layer talks to Azure Resource Manager.

One ``AzureConfig`` serves public Azure (``endpoint=None``) and any stand-in that speaks
ARM over HTTPS (``endpoint="https://127.0.0.1:PORT"``, ``ca_cert`` its CA file). The
credential is any object with ``get_token``; when none is given the layer builds
``DefaultAzureCredential`` (workload identity in a cluster, ``az login`` on a laptop).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from provisioner.model.errors import ConfigError

__all__ = ["AzureConfig"]


@dataclass(frozen=True, slots=True)
class AzureConfig:
    subscription_id: str
    resource_group: str  # the cluster's node resource group (MC_…)
    location: str
    endpoint: str | None = None  # None: public Azure (https://management.azure.com)
    ca_cert: str | None = None  # CA bundle to trust for ``endpoint``
    credential: Any | None = field(default=None, repr=False, compare=False)
    timeout: float = 30.0  # seconds, per HTTP call (connect and read)
    max_retries: int = 3  # retries of one call on 408/429/5xx and dropped connections
    polling_interval: float = 5.0  # seconds between long-running-operation polls (0 for a local stand-in)
    max_retry_after: float = 30.0  # honour Retry-After up to this many seconds; above it, give up at once
    retry_backoff: float = 0.5  # exponential backoff factor between retries without Retry-After
    workers: int = 16  # VM creates in flight at once

    def __post_init__(self) -> None:
        for name in ("subscription_id", "resource_group", "location"):
            if not getattr(self, name):
                raise ConfigError(f"azure.{name}", "must not be empty")
        if self.endpoint is not None and not self.endpoint.startswith("https://"):
            raise ConfigError("azure.endpoint", f"{self.endpoint!r} must be an https:// URL (bearer tokens need TLS)")
        if self.timeout <= 0:
            raise ConfigError("azure.timeout", f"{self.timeout} must be a positive number of seconds")
        if self.max_retries < 0:
            raise ConfigError("azure.max_retries", f"{self.max_retries} must not be negative")
        if self.polling_interval < 0 or self.max_retry_after < 0 or self.retry_backoff < 0:
            raise ConfigError("azure.polling_interval", "polling_interval, max_retry_after and retry_backoff must not be negative")
        if self.workers < 1:
            raise ConfigError("azure.workers", f"{self.workers} must be at least 1")

    @classmethod
    def for_emulator(cls, info: dict[str, str], credential: Any | None = None, **overrides: Any) -> AzureConfig:
        """A config for the ARM emulator from its ready line (``karp-sim arm``) or ``ArmEndpoint.as_dict()``.

        Without a credential it uses ``StaticCredential`` (the emulator accepts any token).
        """
        if credential is None:
            from provisioner.azure.credentials import StaticCredential

            credential = StaticCredential()
        values: dict[str, Any] = {
            "subscription_id": info["subscription"],
            "resource_group": info["resource_group"],
            "location": info["location"],
            "endpoint": info["endpoint"],
            "ca_cert": info.get("ca_cert"),
            "credential": credential,
            "polling_interval": 0.0,
            "timeout": 10.0,
        }
        values.update(overrides)
        return cls(**values)

    @property
    def quota_scope(self) -> str:
        """The Microsoft.Quota scope of this subscription's compute quotas in this location."""
        return f"subscriptions/{self.subscription_id}/providers/Microsoft.Compute/locations/{self.location}"
