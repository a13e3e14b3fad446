"""Fixtures for the Kubernetes integration tests: one emulator per module, official clients."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client, config

from provisioner.kube.cluster import KubeCluster
from sim.kube.emulator import KubeEmulator


@pytest.fixture(scope="module")
def kube() -> Iterator[KubeEmulator]:
    with KubeEmulator(nodes=3, node_ready_delay=0.05, node_gone_delay=0.05, tick=0.05, bookmark_interval=0.2) as emulator:
        yield emulator


@pytest.fixture(scope="module")
def api(kube: KubeEmulator) -> Iterator[client.ApiClient]:
    api_client = config.new_client_from_config(kube.kubeconfig)
    yield api_client
    api_client.close()


@pytest.fixture(scope="module")
def cluster(kube: KubeEmulator) -> Iterator[KubeCluster]:
    c = KubeCluster.connect(kube.kubeconfig)
    yield c
    c.close()


@pytest.fixture(scope="session")
def wait_for() -> Callable[..., Any]:
    return _wait_for


def _wait_for(predicate: Callable[[], Any], timeout: float = 5.0, interval: float = 0.02) -> Any:
    """Poll ``predicate`` until it returns a truthy value; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    event = threading.Event()
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        event.wait(interval)
