"""AKS node allocatable math and the Resources bundle."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from provisioner.model.allocatable import (
    DEFAULT_MAX_PODS,
    EVICTION_MEMORY,
    OS_DISK_BYTES,
    allocatable,
    capacity,
    kube_reserved_cpu,
    kube_reserved_memory,
    legacy_memory_reserved,
    pods_that_fit,
)
from provisioner.model.catalog import load_catalog
from provisioner.model.instance_type import InstanceType
from provisioner.model.quantity import QuantityError
from provisioner.model.resources import Resources

MIB = 2**20
GIB = 2**30
POD = Resources.from_requests({"cpu": "1", "memory": "256M"})
DAEMONSETS = Resources.from_requests({"cpu": "250m", "memory": "481280Ki", "pods": "5"})


def size(vcpus: int, gib: float, max_pods: int = 250) -> InstanceType:
    return InstanceType(name=f"Standard_D{vcpus}s_v5", vcpus=vcpus, memory_mib=int(gib * 1024), family="x",
                        max_pods=max_pods)


# --- reservations ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cores", "millicores"), [(1, 60), (2, 100), (4, 140), (8, 180), (16, 260), (32, 420), (64, 740)]
)
def test_cpu_reservation_matches_the_aks_table(cores: int, millicores: int) -> None:
    assert kube_reserved_cpu(cores) == millicores


def test_cpu_reservation_between_table_points_and_edges() -> None:
    assert kube_reserved_cpu(0) == 0
    assert kube_reserved_cpu(3) == 120
    assert kube_reserved_cpu(20) == 300
    assert kube_reserved_cpu(96) == 1060


@given(st.integers(min_value=1, max_value=512))
def test_cpu_reservation_grows_with_cores_and_stays_small(cores: int) -> None:
    assert kube_reserved_cpu(cores + 1) > kube_reserved_cpu(cores)
    assert kube_reserved_cpu(cores) < cores * 1000


def test_memory_reservation_aks_examples() -> None:
    # "8 GB and 30 pods: 20 MB x 30 + 50 MB = 650 MB"
    assert kube_reserved_memory(8 * GIB, 30) == 650 * MIB
    # "4 GB and 70 pods: 25 % of 4 GB because it is less than 1450 MB"
    assert kube_reserved_memory(4 * GIB, 70) == GIB
    assert kube_reserved_memory(64 * GIB, 250) == (20 * 250 + 50) * MIB


def test_legacy_memory_formula_is_regressive() -> None:
    assert legacy_memory_reserved(4 * GIB) == GIB
    assert legacy_memory_reserved(8 * GIB) == GIB + int(0.8 * GIB)
    assert legacy_memory_reserved(16 * GIB) == int(2.6 * GIB)
    assert legacy_memory_reserved(256 * GIB) == int(2.6 * GIB) + 112 * GIB * 6 // 100 + 128 * GIB * 2 // 100


def test_allocatable_of_d16ls_v5() -> None:
    it = load_catalog("westus2").get("Standard_D16ls_v5")
    assert it is not None
    alloc = allocatable(it)
    assert alloc.cpu_m == 16000 - 260
    assert alloc.memory == 32 * GIB - (20 * 250 + 50) * MIB - EVICTION_MEMORY
    assert alloc.pods == DEFAULT_MAX_PODS == 250
    assert alloc.ephemeral_storage == OS_DISK_BYTES - OS_DISK_BYTES // 10


def test_max_pods_override_changes_pods_and_memory() -> None:
    it = size(4, 16)
    thirty = allocatable(it, max_pods=30)
    assert thirty.pods == 30
    assert thirty.memory == 16 * GIB - 650 * MIB - EVICTION_MEMORY
    assert allocatable(size(4, 16, max_pods=110)).pods == 110
    assert capacity(it).pods == 250 and capacity(it, 30).pods == 30


def test_tiny_size_never_goes_negative() -> None:
    alloc = allocatable(size(1, 0.0625))
    assert alloc.memory >= 0 and alloc.cpu_m == 940
    assert not alloc.is_negative()


@given(st.sampled_from(load_catalog("westus2").types), st.sampled_from([None, 30, 110, 250]))
def test_allocatable_is_below_capacity_for_every_size(it: InstanceType, max_pods: int | None) -> None:
    alloc = allocatable(it, max_pods)
    cap = capacity(it, max_pods)
    assert alloc.fits(cap)
    assert alloc.cpu_m < cap.cpu_m and alloc.memory < cap.memory
    assert alloc.memory >= cap.memory * 3 // 4 - EVICTION_MEMORY


# --- pods_that_fit: the founding scenario ------------------------------------------------------


def test_four_vcpu_d_size_holds_three_inflate_pods() -> None:
    catalog = load_catalog("westus2")
    for name in ("Standard_D4ls_v5", "Standard_D4s_v5", "Standard_D4as_v5", "Standard_D4_v3", "Standard_D3_v2"):
        it = catalog.get(name)
        assert it is not None and it.vcpus == 4
        assert pods_that_fit(it, POD, DAEMONSETS) == 3, name


def test_sixteen_vcpu_size_holds_at_least_ten() -> None:
    it = load_catalog("westus2").get("Standard_D16ls_v5")
    assert it is not None
    assert pods_that_fit(it, POD, DAEMONSETS) == 15
    nodeclaim = Resources.from_requests({"cpu": "10250m", "memory": "2981280Ki", "pods": "15"})
    assert nodeclaim == POD.times(10) + DAEMONSETS + Resources(pods=10)
    assert nodeclaim.fits(allocatable(it))
    eight = load_catalog("westus2").get("Standard_D8ls_v5")
    assert eight is not None and not nodeclaim.fits(allocatable(eight))


def test_pods_that_fit_limits() -> None:
    it = size(16, 64)
    assert pods_that_fit(it, Resources(), DAEMONSETS) == 245  # only the pod slots bound it
    assert pods_that_fit(it, Resources(), DAEMONSETS, max_pods=30) == 25
    assert pods_that_fit(it, Resources(memory=8 * GIB), Resources()) == 7  # memory bound: 58.97 GiB free
    assert pods_that_fit(it, Resources(cpu_m=100, pods=2), Resources()) == 125  # two slots each
    assert pods_that_fit(it, POD, Resources(cpu_m=20000)) == 0  # overhead alone does not fit
    assert pods_that_fit(it, Resources(ephemeral_storage=50 * GIB), Resources()) == 2


@given(
    st.integers(min_value=1, max_value=4000),
    st.integers(min_value=1, max_value=8 * GIB),
    st.sampled_from([2, 4, 8, 16, 32]),
)
def test_the_counted_pods_really_fit_and_one_more_does_not(cpu_m: int, memory: int, vcpus: int) -> None:
    it = size(vcpus, vcpus * 4)
    per_pod = Resources(cpu_m=cpu_m, memory=memory)
    n = pods_that_fit(it, per_pod, DAEMONSETS)
    alloc = allocatable(it)
    assert (per_pod.times(n) + DAEMONSETS + Resources(pods=n)).fits(alloc)
    assert not (per_pod.times(n + 1) + DAEMONSETS + Resources(pods=n + 1)).fits(alloc)


# --- Resources ---------------------------------------------------------------------------------


def test_from_requests_parses_kubernetes_quantities() -> None:
    r = Resources.from_requests({"cpu": "10250m", "memory": "2981280Ki", "pods": "15", "ephemeral-storage": "1Gi",
                                 "nvidia.com/gpu": "1"})
    assert r == Resources(cpu_m=10250, memory=2981280 * 1024, pods=15, ephemeral_storage=GIB)
    assert Resources.from_requests({}) == Resources()
    assert Resources.from_requests({"cpu": 2, "memory": 1024}) == Resources(cpu_m=2000, memory=1024)
    with pytest.raises(QuantityError, match="lots"):
        Resources.from_requests({"cpu": "lots"})


def test_to_requests_round_trips() -> None:
    r = Resources(cpu_m=10250, memory=2981280 * 1024, pods=15)
    assert r.to_requests() == {"cpu": "10250m", "memory": "2981280Ki", "pods": "15"}
    assert Resources.from_requests(r.to_requests()) == r
    assert Resources(ephemeral_storage=GIB).to_requests() == {"ephemeral-storage": "1Gi"}


def test_arithmetic_and_fits() -> None:
    a = Resources(1000, 10, 1, 5)
    b = Resources(250, 4, 2, 5)
    assert a + b == Resources(1250, 14, 3, 10)
    assert a - b == Resources(750, 6, -1, 0)
    assert (a - b).is_negative() and not a.is_negative()
    assert (a - b).clamp() == Resources(750, 6, 0, 0)
    assert b.times(3) == Resources(750, 12, 6, 15)
    assert Resources(1, 1, 1, 1).fits(Resources(1, 1, 1, 1))
    for field in range(4):
        over = [1, 1, 1, 1]
        over[field] = 2
        assert not Resources(*over).fits(Resources(1, 1, 1, 1))


def test_resources_is_frozen_and_hashable() -> None:
    r = Resources(1, 2, 3, 4)
    with pytest.raises(AttributeError):
        r.cpu_m = 5  # type: ignore[misc]
    assert {r, Resources(1, 2, 3, 4)} == {r}
