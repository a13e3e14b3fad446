from __future__ import annotations

from typing import Any

import pytest

from provisioner.controller.cluster import ClaimRecord
from provisioner.controller.kubeport import KubeClusterPort, claim_record, is_provisionable
from provisioner.model.kube_port import Conflict, Forbidden
from provisioner.model.resources import Resources


class Cache:
    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    def objects(self) -> list[dict[str, Any]]:
        return list(self.items)


class FakeKube:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, Any]] = []
        self.fail: Exception | None = None

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any) -> Any:
            self.calls.append((name, *args) if len(args) == 2 else (name, args, None))
            if self.fail is not None:
                raise self.fail
            return {}

        return call


def _pod(name: str, **status: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "256M"}}}]},
            "status": status}


UNSCHEDULABLE = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}


def test_ctrl_provisionable_pods() -> None:
    assert is_provisionable(_pod("a", **UNSCHEDULABLE))
    assert not is_provisionable(_pod("b", phase="Pending"))  # the scheduler has not looked yet
    bound = _pod("c", **UNSCHEDULABLE)
    bound["spec"]["nodeName"] = "n1"
    assert not is_provisionable(bound)
    ds = _pod("d", **UNSCHEDULABLE)
    ds["metadata"]["ownerReferences"] = [{"kind": "DaemonSet", "name": "x"}]
    assert not is_provisionable(ds)
    gone = _pod("e", **UNSCHEDULABLE)
    gone["metadata"]["deletionTimestamp"] = "2026-11-29T18:00:00Z"
    assert not is_provisionable(gone)


def test_ctrl_view_reads_pods_nodes_and_skips_bad_objects() -> None:
    running = _pod("r", phase="Running")
    running["spec"]["nodeName"] = "n1"
    node = {"metadata": {"name": "n1", "labels": {"a": "b"}}, "spec": {"providerID": "azure:///x",
            "taints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]},
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}
    bad_pool = {"metadata": {"name": "p"}, "spec": {"weight": 1000}}
    port = KubeClusterPort(FakeKube(), {"pods": Cache([_pod("a", **UNSCHEDULABLE), running]),  # type: ignore[arg-type]
                                        "nodes": Cache([node]), "nodepools": Cache([bad_pool])})
    view = port.view()
    assert [p.key for p in view.pending] == ["default/a"]
    assert port.pending_keys() == ["default/a"]
    assert view.nodes[0].node.requested.cpu_m == 1000 and view.nodes[0].provider_id == "azure:///x"
    assert view.nodes[0].raw_taints[0]["key"] == "karpenter.sh/unregistered"
    assert view.nodepools == () and port.unreadable == 1


def test_ctrl_claim_round_trip() -> None:
    kube = FakeKube()
    port = KubeClusterPort(kube, {})  # type: ignore[arg-type]
    record = ClaimRecord("np-abcde", "np", "Standard_D4ls_v5", "on-demand", "2", Resources(3250, 2**30, 8),
                         conditions=({"type": "Launched", "status": "True", "lastTransitionTime": "2026-11-29T18:00:01.000Z"},),
                         labels={"karpenter.sh/nodepool": "np", "node.kubernetes.io/instance-type": "Standard_D4ls_v5",
                                 "karpenter.sh/capacity-type": "on-demand"}, provider_id="azure:///vm")
    port.create_nodeclaim(record, [{"key": "k", "operator": "In", "values": ["v"]}], [], "default")
    name, body = kube.calls[0][0], kube.calls[0][1][0]
    assert name == "create_nodeclaim" and body["metadata"]["labels"]["karpenter.azure.com/zone"] == "2"
    assert body["spec"]["resources"]["requests"] == {"cpu": "3250m", "memory": "1Gi", "pods": "8"}
    assert kube.calls[1][0] == "patch_nodeclaim_status" and kube.calls[1][2]["status"]["providerID"] == "azure:///vm"
    back = claim_record({**body, "status": {"conditions": list(record.conditions), "providerID": "azure:///vm"}})
    assert (back.name, back.nodepool, back.instance_type, back.zone) == ("np-abcde", "np", "Standard_D4ls_v5", "2")
    assert back.requests == record.requests and back.launched_at is not None and back.status_of("Launched") == "True"


def test_ctrl_patch_node_removes_only_named_taints_with_resource_version() -> None:
    kube = FakeKube()
    node = {"metadata": {"name": "n1", "resourceVersion": "42"},
            "spec": {"taints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"},
                                {"key": "team", "value": "a", "effect": "NoSchedule"}]}}
    port = KubeClusterPort(kube, {"nodes": Cache([node])})  # type: ignore[arg-type]
    port.patch_node("n1", {"karpenter.sh/nodepool": "np"}, ["karpenter.sh/unregistered"])
    _, name, patch = kube.calls[0]
    assert name == "n1" and patch["metadata"] == {"labels": {"karpenter.sh/nodepool": "np"}, "resourceVersion": "42"}
    assert patch["spec"] == {"taints": [{"key": "team", "value": "a", "effect": "NoSchedule"}]}
    kube.fail = Conflict("stale")
    port.patch_node("n1", {}, ["karpenter.sh/unregistered"])  # a stale cache is retried on the next tick
    kube.fail = Forbidden("no")
    with pytest.raises(Forbidden):
        port.patch_node("n1", {}, ["karpenter.sh/unregistered"])
