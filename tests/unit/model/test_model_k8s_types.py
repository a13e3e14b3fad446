"""Pods, NodePools, requirements, taints and manifest conversion."""

from __future__ import annotations

import pytest

from provisioner.model.errors import InputError
from provisioner.model.manifests import (
    from_documents,
    nodeclass_from_dict,
    nodepool_from_dict,
    pod_from_dict,
    pods_from_workload,
)
from provisioner.model.nodepool import Node, NodeClaim
from provisioner.model.pod import Pod
from provisioner.model.requirements import ARCH, INSTANCE_TYPE, ZONE, Requirement, Requirements
from provisioner.model.resources import Resources
from provisioner.model.taints import Taint, Toleration, tolerates_all, untolerated

# --- requirements -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "values", "label", "expected"),
    [
        ("In", ("a", "b"), "a", True),
        ("In", ("a",), "c", False),
        ("In", ("a",), None, False),
        ("NotIn", ("a",), "a", False),
        ("NotIn", ("a",), "b", True),
        ("NotIn", ("a",), None, True),
        ("Exists", (), "x", True),
        ("Exists", (), None, False),
        ("DoesNotExist", (), None, True),
        ("DoesNotExist", (), "x", False),
        ("Gt", ("4",), "8", True),
        ("Gt", ("4",), "4", False),
        ("Gt", ("4",), "eight", False),
        ("Gt", ("4",), None, False),
        ("Lt", ("16",), "8", True),
        ("Lt", ("16",), "16", False),
    ],
)
def test_requirement_operators_follow_kubernetes(op: str, values: tuple[str, ...], label: str | None,
                                                 expected: bool) -> None:
    assert Requirement("k", op, values).allows(label) is expected


def test_requirement_rejects_malformed_expressions() -> None:
    with pytest.raises(ValueError, match="operator"):
        Requirement("k", "Equals", ("a",))
    with pytest.raises(ValueError, match="at least one value"):
        Requirement("k", "In", ())
    with pytest.raises(ValueError, match="integer"):
        Requirement("k", "Gt", ("x",))
    with pytest.raises(ValueError, match="no values"):
        Requirement("k", "Exists", ("x",))


def test_legacy_keys_are_normalised_and_sets_are_canonical() -> None:
    a = Requirements.of(Requirement("beta.kubernetes.io/arch", "In", ("amd64",)),
                        Requirement("failure-domain.beta.kubernetes.io/zone", "In", ("westus2-1",)))
    b = Requirements.of(Requirement(ZONE, "In", ("westus2-1",)), Requirement(ARCH, "In", ("amd64",)))
    assert a == b and hash(a) == hash(b)
    assert a.matches({ARCH: "amd64", ZONE: "westus2-1"})


def test_compatibility_is_per_key_intersection() -> None:
    pool = Requirements.of(Requirement("karpenter.azure.com/sku-family", "In", ("D", "E")),
                           Requirement("karpenter.azure.com/sku-cpu", "Lt", ("33",)))
    assert pool.compatible(Requirements.of(Requirement("karpenter.azure.com/sku-family", "In", ("E", "F"))))
    assert not pool.compatible(Requirements.of(Requirement("karpenter.azure.com/sku-family", "NotIn", ("D", "E"))))
    assert not pool.compatible(Requirements.of(Requirement("karpenter.azure.com/sku-cpu", "Gt", ("32",))))
    assert pool.compatible(Requirements.of(Requirement("karpenter.azure.com/sku-cpu", "Gt", ("31",))))
    assert not pool.compatible(Requirements.of(Requirement("karpenter.azure.com/sku-family", "DoesNotExist")))
    assert pool.conflicts(Requirements.of(Requirement("karpenter.azure.com/sku-cpu", "Gt", ("40",)))) == (
        "karpenter.azure.com/sku-cpu",
    )


def test_gt_lt_range_with_exclusions() -> None:
    r = Requirements.of(Requirement("n", "Gt", ("1",)), Requirement("n", "Lt", ("4",)))
    assert r.compatible(Requirements.of(Requirement("n", "NotIn", ("2",))))
    assert not r.compatible(Requirements.of(Requirement("n", "NotIn", ("2", "3"))))
    assert r.compatible(Requirements.of(Requirement("n", "In", ("3", "9"))))
    assert not r.compatible(Requirements.of(Requirement("n", "In", ("9",))))


def test_requirements_against_instance_type_labels() -> None:
    from provisioner.model.catalog import load_catalog

    it = load_catalog("westus2").get("Standard_D16ls_v5")
    assert it is not None
    labels = it.labels()
    r = Requirements.of(
        Requirement("karpenter.azure.com/sku-family", "In", ("D",)),
        Requirement("karpenter.azure.com/sku-cpu", "Gt", ("8",)),
        Requirement("karpenter.azure.com/sku-gpu-count", "DoesNotExist"),
        Requirement(INSTANCE_TYPE, "NotIn", ("Standard_D2ls_v5",)),
    )
    assert r.matches(labels)
    assert [str(x) for x in Requirements.of(Requirement("karpenter.azure.com/sku-cpu", "Lt", ("8",))).failing(labels)] == [
        "karpenter.azure.com/sku-cpu Lt [8]"
    ]


# --- taints ---------------------------------------------------------------------------------


def test_tolerations_match_taints() -> None:
    gpu = Taint("sku", "NoSchedule", "gpu")
    assert Toleration("sku", "Equal", "gpu", "NoSchedule").tolerates(gpu)
    assert not Toleration("sku", "Equal", "cpu").tolerates(gpu)
    assert Toleration("sku", "Exists").tolerates(gpu)
    assert Toleration(operator="Exists").tolerates(gpu)
    assert not Toleration("sku", "Exists", effect="NoExecute").tolerates(gpu)
    soft = Taint("x", "PreferNoSchedule")
    assert tolerates_all([soft], [])
    assert untolerated([gpu, soft], []) == (gpu,)
    with pytest.raises(ValueError):
        Taint("k", "Sometimes")
    with pytest.raises(ValueError):
        Toleration("", "Equal", "v")


# --- pods, nodes, claims ---------------------------------------------------------------------


def test_pod_terms_fold_node_selector_into_each_term_and_shape_groups() -> None:
    term_a = Requirements.of(Requirement(ZONE, "In", ("westus2-1",)))
    term_b = Requirements.of(Requirement(ZONE, "In", ("westus2-2",)))
    pod = Pod("default", "a", Resources(1000, 2**30), node_selector={ARCH: "amd64"}, affinity_terms=(term_a, term_b))
    assert pod.requests.pods == 1
    assert len(pod.terms) == 2
    assert all(t.on(ARCH) for t in pod.terms)
    twin = Pod("other", "b", Resources(1000, 2**30), node_selector={ARCH: "amd64"}, affinity_terms=(term_a, term_b))
    assert twin.shape == pod.shape
    assert Pod("d", "c", Resources(1001, 2**30)).shape != pod.shape


def test_pod_ownership_helpers() -> None:
    assert Pod("kube-system", "ds", owner_kind="DaemonSet", owner_name="x").is_daemonset_owned
    assert not Pod("kube-system", "ds", owner_kind="DaemonSet").is_provisionable
    assert not Pod("kube-system", "mirror", owner_kind="Node").is_provisionable
    assert not Pod("default", "bound", node_name="n1").is_provisionable
    assert Pod("default", "p", owner_kind="ReplicaSet", owner_name="rs").owner == "ReplicaSet/rs"


def test_node_free_capacity_and_claim_size() -> None:
    node = Node("n1", Resources(4000, 8 * 2**30, 30), Resources(5000, 2**30, 3),
                labels=(("karpenter.sh/nodepool", "gp"),))
    assert node.free == Resources(0, 7 * 2**30, 27)
    assert node.nodepool == "gp"
    claim = NodeClaim("gp-abcde", "gp", Resources(1000), instance_types=("Standard_D2ls_v5", "Standard_D2as_v5"))
    assert claim.size == "Standard_D2ls_v5"


# --- manifests ------------------------------------------------------------------------------

DEPLOY = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "inflate", "namespace": "default"},
    "spec": {
        "replicas": 3,
        "template": {
            "metadata": {"labels": {"app": "inflate"}},
            "spec": {
                "nodeSelector": {"kubernetes.io/arch": "amd64"},
                "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"}],
                "containers": [
                    {"name": "a", "resources": {"requests": {"cpu": "1", "memory": "256M"}}},
                    {"name": "b", "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}},
                ],
                "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "3", "memory": "1Mi"}}}],
            },
        },
    },
}


def test_deployment_expands_to_deterministic_pods() -> None:
    pods = pods_from_workload(DEPLOY, "f.yaml document 1")
    assert len(pods) == 3
    again = pods_from_workload(DEPLOY, "f.yaml document 1")
    assert [p.name for p in pods] == [p.name for p in again]
    assert len({p.name for p in pods}) == 3
    rs = pods[0].owner_name
    assert pods[0].owner_kind == "ReplicaSet" and rs.startswith("inflate-") and len(rs) == len("inflate-") + 10
    assert all(p.name.startswith(rs + "-") and len(p.name) == len(rs) + 6 for p in pods)
    # containers sum (limits stand in for missing requests), init containers raise the floor
    assert pods[0].requests == Resources(3000, 256_000_000 + 128 * 2**20, 1, 0)
    assert pods[0].selector_map == {"kubernetes.io/arch": "amd64"}
    assert pods[0].tolerations == (Toleration("dedicated", "Equal", "x", "NoSchedule"),)


def test_pod_with_required_node_affinity() -> None:
    pod = pod_from_dict({
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "ownerReferences": [{"kind": "Job", "name": "j", "controller": True}],
                     "creationTimestamp": "2026-11-29T10:00:00Z"},
        "spec": {
            "priority": 100,
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "karpenter.azure.com/sku-cpu", "operator": "Gt", "values": ["4"]}]},
            ]}}},
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "250m", "ephemeral-storage": "1Gi"}}}],
        },
    })
    assert pod.key == "ns/p" and pod.owner == "Job/j" and pod.priority == 100
    assert pod.requests == Resources(250, 0, 1, 2**30)
    assert pod.created_at is not None and pod.created_at.year == 2026
    assert str(pod.terms[0]) == "karpenter.azure.com/sku-cpu Gt [4]"


def test_bad_input_names_document_and_field() -> None:
    bad = {"kind": "Deployment", "metadata": {"name": "inflate", "namespace": "default"},
           "spec": {"replicas": 1, "template": {"spec": {"containers": [
               {"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}}}}
    with pytest.raises(InputError) as e:
        pods_from_workload(bad, "pods.yaml document 2")
    text = str(e.value)
    assert "pods.yaml document 2 (Deployment default/inflate)" in text
    assert "spec.template.spec.containers[0].resources.requests.cpu" in text
    with pytest.raises(InputError, match=r"metadata\.name: missing"):
        pod_from_dict({"kind": "Pod", "metadata": {}, "spec": {}}, "x.yaml document 1")
    with pytest.raises(InputError, match=r"requirements\[0\]"):
        nodepool_from_dict({"kind": "NodePool", "metadata": {"name": "np"}, "spec": {"template": {"spec": {
            "requirements": [{"key": "k", "operator": "Near", "values": ["a"]}]}}}})
    with pytest.raises(InputError, match=r"spec\.replicas"):
        pods_from_workload({**DEPLOY, "spec": {**DEPLOY["spec"], "replicas": "many"}})  # type: ignore[dict-item]
    with pytest.raises(InputError, match="kind: missing"):
        from_documents([("f.yaml document 1", {"metadata": {"name": "x"}})])


def test_nodepool_and_nodeclass_from_dicts() -> None:
    pool = nodepool_from_dict({
        "kind": "NodePool",
        "metadata": {"name": "general-purpose"},
        "spec": {
            "weight": 10,
            "limits": {"cpu": "100", "memory": "400Gi"},
            "template": {
                "metadata": {"labels": {"intent": "apps"}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
                    "requirements": [{"key": "karpenter.azure.com/sku-family", "operator": "In", "values": ["D"]}],
                    "taints": [{"key": "dedicated", "value": "apps", "effect": "NoSchedule"}],
                    "startupTaints": [{"key": "init", "effect": "NoExecute"}],
                },
            },
            "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s", "budgets": [{"nodes": "1"}]},
        },
    })
    assert pool.weight == 10 and pool.limits.cpu_m == 100_000 and pool.limits.memory == 400 * 2**30
    assert pool.limits.nodes is None
    assert pool.label_map == {"intent": "apps", "karpenter.sh/nodepool": "general-purpose"}
    assert pool.taints == (Taint("dedicated", "NoSchedule", "apps"),)
    assert pool.disruption.budgets[0].nodes == "1"
    nc = nodeclass_from_dict({"kind": "AKSNodeClass", "metadata": {"name": "default"},
                              "spec": {"imageFamily": "AzureLinux", "maxPods": 30}})
    assert nc.max_pods == 30 and nc.image_family == "AzureLinux"
    with pytest.raises(InputError, match="osDiskSizeGB"):
        nodeclass_from_dict({"kind": "AKSNodeClass", "metadata": {"name": "d"}, "spec": {"osDiskSizeGB": 10}})


def test_from_documents_sorts_kinds_and_charges_bound_pods_to_nodes() -> None:
    node = {"kind": "Node", "metadata": {"name": "n1", "labels": {"karpenter.sh/nodepool": "gp"}},
            "status": {"allocatable": {"cpu": "3860m", "memory": "12Gi", "pods": "250"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}
    bound = {"kind": "Pod", "metadata": {"name": "running"},
             "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    ds = {"kind": "DaemonSet", "metadata": {"name": "kube-proxy", "namespace": "kube-system"},
          "spec": {"template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}}}}
    listing = {"kind": "List", "items": [DEPLOY, {"kind": "Service", "metadata": {"name": "svc"}}]}
    m = from_documents([("a.yaml document 1", node), ("a.yaml document 2", bound), ("a.yaml document 3", ds),
                        ("b.json document 1", listing)])
    assert len(m.pods) == 4
    assert m.daemonsets[0].is_daemonset_owned and m.daemonsets[0].requests.cpu_m == 100
    assert m.nodes[0].requested == Resources(1000, 0, 1, 0)
    assert m.nodes[0].free.cpu_m == 2860
    assert m.skipped == ("b.json document 1 item 2 (Service svc)",)
