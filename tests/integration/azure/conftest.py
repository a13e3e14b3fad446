"""Shared pieces of the Azure integration tests: an offline credential and configs for the emulator."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from azure.core.credentials import AccessToken

from provisioner.azure import AzureCompute, AzureConfig
from provisioner.model.ports import NicSpec, VmSpec
from sim.arm import ArmEmulator

IMAGE = "/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images/2204gen2containerd/versions/202311.13.0"


class StaticCredential:
    """A credential for offline use: any token is accepted by the emulator."""

    def __init__(self) -> None:
        self.calls = 0

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.calls += 1
        return AccessToken("offline-token-never-logged", int(time.time()) + 3600)


def _config_for(arm: ArmEmulator, **overrides: Any) -> AzureConfig:
    values: dict[str, Any] = {"max_retries": 2, "retry_backoff": 0.0, "timeout": 5.0}
    values.update(overrides)
    return AzureConfig.for_emulator(arm.endpoint.as_dict(), StaticCredential(), **values)


def _launch(compute: AzureCompute, arm: ArmEmulator, name: str, size: str, zone: str = "", spot: bool = False,
           tags: dict[str, str] | None = None) -> Any:
    """Create the NIC, then start the VM create; returns the VmCreation handle."""
    nic = compute.create_nic(NicSpec(name, arm.endpoint.subnet_id, tags or {}))
    return compute.begin_create_vm(VmSpec(name, size, nic.id, IMAGE, zone=zone, spot=spot, tags=tags or {}))


@pytest.fixture(scope="module")
def arm() -> Iterator[ArmEmulator]:
    with ArmEmulator(location="westus2", quotas={"cores": 20}, usages={"cores": 14}) as emulator:
        yield emulator


@pytest.fixture(scope="module")
def compute(arm: ArmEmulator) -> Iterator[AzureCompute]:
    with AzureCompute(_config_for(arm)) as adapter:
        yield adapter


@pytest.fixture(autouse=False)
def fresh(arm: ArmEmulator) -> ArmEmulator:
    arm.reset()
    return arm


@pytest.fixture(scope="session")
def config_for() -> Any:
    """``config_for(arm, **overrides) -> AzureConfig`` with an offline credential."""
    return _config_for


@pytest.fixture(scope="session")
def launch() -> Any:
    """``launch(compute, arm, name, size, zone="", spot=False, tags=None) -> VmCreation``."""
    return _launch
