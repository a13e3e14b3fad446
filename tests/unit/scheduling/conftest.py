"""Shared values for the planner tests: the founding scenario's catalog, NodePool and pods."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from provisioner.model.catalog import Catalog, load_catalog
from provisioner.model.nodepool import NodePool
from provisioner.model.pod import Pod
from provisioner.model.quota import QuotaSnapshot, QuotaUsage
from provisioner.model.requirements import Requirement, Requirements
from provisioner.model.resources import Resources

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
INFLATE = Resources(1000, 256_000_000, 1, 0)
OVERHEAD = Resources(250, 481280 * 1024, 5, 0)


def general_purpose(*extra: Requirement, name: str = "general-purpose", capacity: tuple[str, ...] = ("on-demand",),
                    **kw: object) -> NodePool:
    reqs = Requirements.of(
        Requirement("karpenter.azure.com/sku-family", "In", ("D",)),
        Requirement("kubernetes.io/arch", "In", ("amd64",)),
        Requirement("kubernetes.io/os", "In", ("linux",)),
        Requirement("karpenter.sh/capacity-type", "In", capacity),
        *extra,
    )
    return NodePool(name, reqs, **kw)  # type: ignore[arg-type]


def inflate(n: int, prefix: str = "inflate-5c8d7f9b6d", **kw: object) -> tuple[Pod, ...]:
    return tuple(
        Pod("default", f"{prefix}-{i:05d}", INFLATE, owner_kind="ReplicaSet", owner_name=prefix, **kw)  # type: ignore[arg-type]
        for i in range(n)
    )


def quota(**items: tuple[int, int]) -> QuotaSnapshot:
    return QuotaSnapshot("westus2", NOW, "test", {k: QuotaUsage(k, lim, use) for k, (lim, use) in items.items()})


@pytest.fixture(scope="session")
def westus2() -> Catalog:
    return load_catalog("westus2")


class Kit:
    """The helpers above, handed to tests as a fixture (test modules cannot import conftest)."""

    NOW = NOW
    INFLATE = INFLATE
    OVERHEAD = OVERHEAD
    general_purpose = staticmethod(general_purpose)
    inflate = staticmethod(inflate)
    quota = staticmethod(quota)


@pytest.fixture(scope="session")
def kit() -> type[Kit]:
    return Kit
