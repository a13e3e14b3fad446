"""The ARM emulator and the real Azure SDK clients behind the Compute port."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from provisioner.azure.compute import AzureCompute
from provisioner.azure.config import AzureConfig
from sim.arm.emulator import ArmEmulator


class OfflineCredential:
    """Any bearer token will do for the emulator."""

    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        from azure.core.credentials import AccessToken

        return AccessToken("karp-offline", int(time.time()) + 3600)


def compute_for(arm: ArmEmulator) -> AzureCompute:
    config = AzureConfig.for_emulator(arm.endpoint.as_dict(), OfflineCredential(), max_retries=0)
    return AzureCompute(config)


@pytest.fixture
def arm_factory() -> Iterator[Any]:
    started: list[tuple[ArmEmulator, AzureCompute]] = []

    def make(**kwargs: Any) -> tuple[ArmEmulator, AzureCompute]:
        arm = ArmEmulator(**kwargs)
        arm.start()
        compute = compute_for(arm)
        started.append((arm, compute))
        return arm, compute

    yield make
    for arm, compute in started:
        compute.close()
        arm.stop()
