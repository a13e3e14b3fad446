"""The Azure SDK clients, built once from an ``AzureConfig``.

Every client gets the same transport settings: ``base_url`` (the stand-in's endpoint or
public Azure), ``connection_verify`` (its CA), connect and read timeouts, the
long-running-operation ``polling_interval`` and a ``BoundedRetryPolicy``: azure-core's
retry policy (retries 408/429/5xx and dropped connections, honours ``Retry-After``) with
two bounds added, the number of retries and the longest ``Retry-After`` it will wait. A
429 asking for a longer wait is returned at once, so the caller sees ``Throttled`` with
the server's figure and decides. HTTP logging stays azure-core's, which redacts the
``Authorization`` header; tokens are never logged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from azure.core.pipeline import PipelineResponse
from azure.core.pipeline.policies import RetryPolicy
from azure.mgmt.compute import ComputeManagementClient
from azure.mgmt.network import NetworkManagementClient
from azure.mgmt.quota import QuotaMgmtClient

from provisioner.azure.config import AzureConfig

__all__ = ["AzureClients", "BoundedRetryPolicy", "build_clients", "resolve_credential"]


class BoundedRetryPolicy(RetryPolicy):  # type: ignore[type-arg]
    """azure-core's RetryPolicy that never waits longer than ``max_retry_after`` for a retry."""

    def __init__(self, max_retry_after: float = 30.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_retry_after = max_retry_after

    def is_retry(self, settings: dict[str, Any], response: PipelineResponse[Any, Any]) -> bool:
        retry_after = self.get_retry_after(response)
        if retry_after is not None and retry_after > self.max_retry_after:
            return False
        return bool(super().is_retry(settings, response))


def resolve_credential(config: AzureConfig) -> Any:
    """The configured credential, else DefaultAzureCredential (workload identity, az login, …)."""
    if config.credential is not None:
        return config.credential
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()


def client_options(config: AzureConfig) -> dict[str, Any]:
    """Keyword arguments every management client takes."""
    options: dict[str, Any] = {
        "polling_interval": config.polling_interval,
        "retry_policy": BoundedRetryPolicy(
            max_retry_after=config.max_retry_after,
            retry_total=config.max_retries,
            retry_connect=config.max_retries,
            retry_read=config.max_retries,
            retry_status=config.max_retries,
            retry_backoff_factor=config.retry_backoff,
            retry_backoff_max=max(config.max_retry_after, 1.0),
            timeout=config.timeout * (config.max_retries + 1) + config.max_retry_after * config.max_retries,
        ),
        "connection_timeout": config.timeout,
        "read_timeout": config.timeout,
    }
    if config.endpoint is not None:
        options["base_url"] = config.endpoint
    if config.ca_cert is not None:
        options["connection_verify"] = config.ca_cert
    return options


@dataclass(frozen=True, slots=True)
class AzureClients:
    compute: Any  # ComputeManagementClient
    network: Any  # NetworkManagementClient
    quota: Any  # QuotaMgmtClient

    def close(self) -> None:
        for client in (self.compute, self.network, self.quota):
            client.close()


def build_clients(config: AzureConfig) -> AzureClients:
    credential = resolve_credential(config)
    sub = config.subscription_id
    return AzureClients(
        compute=ComputeManagementClient(credential, sub, **client_options(config)),
        network=NetworkManagementClient(credential, sub, **client_options(config)),
        quota=QuotaMgmtClient(credential, sub, **client_options(config)),
    )
