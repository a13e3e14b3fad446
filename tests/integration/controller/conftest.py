"""The ARM emulator and the real Azure SDK clients behind the Compute port; waiting for a condition."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from provisioner.azure.compute import AzureCompute
from provisioner.azure.config import AzureConfig
from provisioner.azure.credentials import StaticCredential
from sim.arm.emulator import ArmEmulator


def _wait_until(condition: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Poll ``condition`` until it returns a truthy value (returned); fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        pause.wait(0.05)
    raise AssertionError(f"not met within {timeout} s")


@pytest.fixture
def wait_until() -> Callable[..., Any]:
    return _wait_until


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
