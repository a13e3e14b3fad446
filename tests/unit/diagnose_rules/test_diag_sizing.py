"""Per-pod requests from a NodeClaim, vCPUs from the catalog or the name, what fits a headroom."""

from __future__ import annotations

from diagnose.sizing import alternatives, best_mix, derive_pod_requests, node_size, vcpus_of


def test_seed_claim_splits_into_pods_and_daemonset_overhead() -> None:
    per_pod = derive_pod_requests(10250, 2981280 * 1024, 15, 10, "general-purpose-pq7gl")
    assert per_pod is not None
    assert (per_pod.cpu_m, per_pod.memory) == (1000, 256_000_000)
    assert (per_pod.overhead_cpu_m, per_pod.overhead_memory, per_pod.overhead_pods) == (250, 481280 * 1024, 5)


def test_no_daemonset_pods_means_no_overhead() -> None:
    per_pod = derive_pod_requests(3000, None, 3, 3, "c")
    assert per_pod is not None and (per_pod.cpu_m, per_pod.overhead_cpu_m, per_pod.overhead_pods) == (1000, 0, 0)
    assert derive_pod_requests(None, None, None, 3, "c") is None


def test_larger_pods_are_not_mistaken_for_overhead() -> None:
    per_pod = derive_pod_requests(15250, None, 15, 10, "c")
    assert per_pod is not None and (per_pod.cpu_m, per_pod.overhead_cpu_m) == (1500, 250)


def test_vcpus_from_catalog_and_from_name() -> None:
    assert vcpus_of("Standard_D16ls_v5", "westus2") == 16
    size = node_size("Standard_D14_v2", "westus2")
    assert size is not None and size.vcpus == 16 and size.source == "catalog"
    assert vcpus_of("Standard_D16ls_v5", "nowhere") == 16  # from the name
    assert node_size("Standard_D14_v2", "nowhere") is None  # old names do not carry their vCPUs


def test_alternatives_within_headroom_and_the_best_mix() -> None:
    per_pod = derive_pod_requests(10250, 2981280 * 1024, 15, 10, "c")
    assert per_pod is not None
    for region, source in (("westus2", "catalog"), ("nowhere", "name")):
        options = alternatives("Standard_D16ls_v5", region, 6, per_pod, 10)
        assert options and all(o.vcpus <= 6 and o.source == source for o in options)
        mix = best_mix(options, 6, 10)
        assert sum(o.vcpus * n for o, n in mix) <= 6
        assert sum(o.pods_per_node * n for o, n in mix) == 4
    assert alternatives("Standard_D16ls_v5", "westus2", 1, per_pod, 10) == []
