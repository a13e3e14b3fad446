"""karp-provisioner's configuration, in one place.

Every setting comes from a ``KARP_``-prefixed environment variable or from the flag of the
same name (flags override the environment); ``Settings.load(env, flags)`` validates the
whole set once at start. A bad value raises ``ConfigError`` whose message names the
setting (``KARP_LOCATION`` / ``--location``) and what is wrong with it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from provisioner.model.errors import ConfigError

__all__ = ["MODES", "Settings", "env_name", "flag_name"]

MODES = ("quota-aware", "karpenter")
_LEVELS = ("DEBUG", "INFO", "WARN", "ERROR")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.()-]{0,89}$")
_GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_SUBNET = re.compile(r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/virtualNetworks/[^/]+/subnets/[^/]+$", re.IGNORECASE)


def env_name(field_name: str) -> str:
    return "KARP_" + field_name.upper()


def flag_name(field_name: str) -> str:
    return "--" + field_name.replace("_", "-")


class Settings(BaseSettings):
    """What karp-provisioner needs to know about the cluster, Azure and itself."""

    model_config = SettingsConfigDict(env_prefix="KARP_", extra="forbid", validate_default=True)

    cluster_name: str = Field(description="the AKS cluster's name (owner tag on every VM and NIC)")
    subscription_id: str = Field(description="Azure subscription id (a GUID)")
    resource_group: str = Field(description="the cluster's resource group")
    location: str = Field(description="Azure region, e.g. westus2")
    node_resource_group: str = Field(description="where VMs and NICs are created (MC_…)")
    subnet_id: str = Field(description="ARM id of the nodes' subnet")
    client_id: str = Field(default="", description="managed identity / workload identity client id")
    azure_endpoint: str = Field(default="https://management.azure.com", description="ARM endpoint URL")
    azure_ca_file: str = Field(default="", description="CA bundle to trust for the ARM endpoint")
    kubeconfig: str = Field(default="", description="kubeconfig path ('' = in-cluster config)")
    kube_context: str = Field(default="", description="kubeconfig context")
    batch_idle_seconds: float = Field(default=1.0, description="close a batch after this long without new pods")
    batch_max_seconds: float = Field(default=10.0, description="close a batch at the latest after this long")
    quota_refresh_seconds: float = Field(default=60.0, description="re-read vCPU quota usage this often")
    mode: Literal["quota-aware", "karpenter"] = Field(default="quota-aware", description="quota-aware | karpenter")
    log_level: Literal["DEBUG", "INFO", "WARN", "ERROR"] = Field(default="INFO", description="lowest level written")
    log_file: str = Field(default="", description="also append JSON log lines to this file")
    launch_timeout_seconds: float = Field(default=300.0, description="delete a NodeClaim (and its VM) not launched within this long")
    registration_timeout_seconds: float = Field(default=900.0, description="delete a launched NodeClaim whose node has not registered within this long")
    gc_interval_seconds: float = Field(default=120.0, description="look for VMs, NICs and NodeClaims to garbage collect this often")
    gc_grace_seconds: float = Field(default=300.0, description="leave a VM or NIC of ours with no NodeClaim alone for this long")
    leader_elect: bool = Field(default=True, description="compete for the leader Lease (false: this is the only replica)")
    lease_namespace: str = Field(default="", description="namespace of the leader Lease ('' = the pod's namespace, else karpenter)")
    lease_duration_seconds: float = Field(default=15.0, description="a standby takes over this long after the leader stops renewing")
    metrics_port: int = Field(default=8080, description="serve Prometheus metrics on this port")
    health_port: int = Field(default=8081, description="serve /healthz and /readyz on this port (equal to the metrics port: one server)")
    shutdown_grace_seconds: float = Field(default=30.0, description="on SIGTERM, wait this long for launches in flight")

    @field_validator("subscription_id")
    @classmethod
    def _guid(cls, value: str) -> str:
        if not _GUID.match(value):
            raise ValueError("must be a GUID like 00000000-0000-0000-0000-000000000000")
        return value.lower()

    @field_validator("cluster_name", "resource_group", "node_resource_group")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("must be 1-90 letters, digits, '-', '_', '.' or parentheses")
        return value

    @field_validator("location")
    @classmethod
    def _location(cls, value: str) -> str:
        value = value.strip().lower().replace(" ", "")
        if not re.match(r"^[a-z][a-z0-9]{2,30}$", value):
            raise ValueError("must be an Azure region name such as westus2")
        return value

    @field_validator("subnet_id")
    @classmethod
    def _subnet(cls, value: str) -> str:
        if not _SUBNET.match(value):
            raise ValueError(
                "must be a subnet ARM id: /subscriptions/<sub>/resourceGroups/<rg>/providers/"
                "Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>"
            )
        return value

    @field_validator("azure_endpoint")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        if not re.match(r"^https://[^\s/]+(:\d+)?/?$", value):
            raise ValueError("must be an https:// URL with no path, e.g. https://management.azure.com")
        return value.rstrip("/")

    @field_validator("azure_ca_file", "kubeconfig")
    @classmethod
    def _file(cls, value: str) -> str:
        if value and not os.path.isfile(value):
            raise ValueError(f"file {value!r} does not exist")
        return value

    @field_validator("batch_idle_seconds", "batch_max_seconds", "quota_refresh_seconds", "launch_timeout_seconds",
                     "registration_timeout_seconds", "gc_interval_seconds", "gc_grace_seconds", "lease_duration_seconds",
                     "shutdown_grace_seconds")
    @classmethod
    def _positive(cls, value: float) -> float:
        if not value > 0:
            raise ValueError("must be a positive number of seconds")
        return value

    @field_validator("metrics_port", "health_port")
    @classmethod
    def _port(cls, value: int) -> int:
        if not 0 <= value <= 65535:
            raise ValueError("must be a port number between 0 and 65535")
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _level(cls, value: Any) -> Any:
        if isinstance(value, str):
            upper = value.upper()
            return "WARN" if upper == "WARNING" else upper
        return value

    @classmethod
    def load(cls, flags: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None) -> Settings:
        """Environment (``KARP_*``), overridden by non-None ``flags``; raises ConfigError naming the setting."""
        environ = dict(os.environ if env is None else env)
        values: dict[str, Any] = {}
        for name in cls.model_fields:
            key = env_name(name)
            if key in environ:
                values[name] = environ[key]
        for name, value in (flags or {}).items():
            if value is not None:
                values[name] = value
        try:
            settings = cls.model_validate(values)
        except ValidationError as e:
            err = e.errors()[0]
            field = str(err["loc"][0]) if err["loc"] else ""
            source = flag_name(field) if flags and flags.get(field) is not None else env_name(field)
            if err["type"] == "missing":
                problem = f"is required (set {env_name(field)} or {flag_name(field)})"
            else:
                problem = str(err["msg"]).removeprefix("Value error, ")
            raise ConfigError(source, problem) from None
        if settings.batch_idle_seconds > settings.batch_max_seconds:
            raise ConfigError(env_name("batch_idle_seconds"), "must not exceed KARP_BATCH_MAX_SECONDS")
        return settings

    @classmethod
    def from_sources(cls, **kwargs: Any) -> Settings:
        """Build without reading the process environment (tests, the demo)."""
        return cls.load(flags=kwargs, env={})
