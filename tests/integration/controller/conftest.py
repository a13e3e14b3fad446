"""The ARM emulator and the real Azure SDK clients behind the Compute port."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from provisioner.azure.compute import AzureCompute
from provisioner.azure.config import AzureConfig
from provisioner.azure.credentials import StaticCredential
from sim.arm.emulator import ArmEmulator


def compute_for(arm: ArmEmulator) -> AzureCompute:
    config = AzureConfig.for_emulator(arm.endpoint.as_dict(), StaticCredential(), max_retries=0)
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
