"""The fleet snapshot read from informer caches, and the writes upkeep makes through Kube."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from provisioner.controller.fleet import DISRUPTED_TAINT, KubeFleet
from provisioner.controller.fleet import Fleet as _Fleet
from provisioner.model.kube_port import Conflict

T0 = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)


class Cache:
    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self._objects = objects

    def objects(self) -> list[dict[str, Any]]:
        return self._objects


class Kube:
    def __init__(self, conflict: bool = False) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.conflict = conflict

    def delete_nodeclaim(self, name: str) -> None:
        self.calls.append(("delete_nodeclaim", name))

    def patch_nodeclaim_status(self, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("patch_nodeclaim_status", patch))
        return {}

    def delete_node(self, name: str) -> None:
        self.calls.append(("delete_node", name))

    def patch_node(self, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        if self.conflict:
            raise Conflict("stale")
        self.calls.append(("patch_node", patch))
        return {}

    def patch_nodepool_status(self, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("patch_nodepool_status", patch))
        return {}

    def post_event(self, involved: dict[str, Any], type_: str, reason: str, message: str) -> None:
        self.calls.append(("event", (involved["kind"], involved["apiVersion"], reason)))

    def delete(self, resource: Any, name: str, namespace: str | None = None) -> None:
        self.calls.append(("delete", (resource.plural, namespace, name)))


def pod(name: str, node: str | None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", **extra.pop("meta", {})}
    return {"metadata": meta, "spec": {"nodeName": node} if node else {}, "status": extra.pop("status", {})}


POOL = {"metadata": {"name": "gp"}, "spec": {"template": {"spec": {"nodeClassRef": {"name": "default"}}}},
        "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready",
                                   "lastTransitionTime": "2026-11-29T17:00:00Z"}]}}
NODE = {"metadata": {"name": "n1", "resourceVersion": "7", "labels": {"karpenter.sh/nodepool": "gp"},
                     "creationTimestamp": "2026-11-29T17:00:00Z"},
        "spec": {"providerID": "azure:///x/aks-a", "taints": [{"key": "a", "effect": "NoSchedule"}]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}}


def fleet_of(kube: Kube) -> tuple[KubeFleet, _Fleet]:
    pending = pod("waiting", None, status={"conditions": [{"type": "PodScheduled", "status": "False",
                                                            "reason": "Unschedulable"}]})
    pods = [
        pod("web", "n1"),
        pod("ds", "n1", meta={"ownerReferences": [{"kind": "DaemonSet", "name": "kube-proxy"}]}),
        pod("batch", "n1", meta={"annotations": {"karpenter.sh/do-not-disrupt": "true"}}),
        pod("done", "n1", status={"phase": "Succeeded"}),
        pending,
    ]
    claim = {"metadata": {"name": "a", "creationTimestamp": "2026-11-29T17:30:00Z",
                          "labels": {"karpenter.sh/nodepool": "gp"}},
             "status": {"conditions": [{"type": "Launched", "status": "True"}], "nodeName": "n1"}}
    port = KubeFleet(kube, {"pods": Cache(pods), "nodes": Cache([NODE]), "nodeclaims": Cache([claim]),
                            "nodepools": Cache([POOL, {"metadata": {"name": "broken"}, "spec": {"weight": 900}}])})
    return port, port.fleet()


def test_the_snapshot() -> None:
    _, fleet = fleet_of(Kube())
    assert fleet.pending_pods == 1 and [p.name for p in fleet.pools] == ["gp"]  # an unreadable pool is skipped
    on = {p.name: p for p in fleet.pods_on("n1")}
    assert set(on) == {"web", "ds", "batch", "done"}
    assert on["ds"].daemonset and on["batch"].do_not_disrupt and on["done"].terminal and not on["web"].daemonset
    [claim] = fleet.claims
    assert claim.created_at == datetime(2026, 11, 29, 17, 30, tzinfo=UTC) and claim.record.node_name == "n1"
    [node] = fleet.nodes
    assert node.ready and node.nodepool == "gp" and node.taints == ("a",)


def test_writes() -> None:
    kube = Kube()
    port, _ = fleet_of(kube)
    port.taint_node("n1", DISRUPTED_TAINT, "NoSchedule")
    port.evict_pod("default", "web")
    port.set_nodepool_condition("gp", "NodeRegistrationHealthy", "False", "LaunchTimeout", "m", T0)
    port.set_nodepool_condition("nope", "NodeRegistrationHealthy", "False", "LaunchTimeout", "m", T0)  # gone: no-op
    port.event("NodePool", "", "gp", "Warning", "LaunchTimeout", "m")
    [(_, taint), (_, evict), (_, status), (_, event)] = kube.calls
    assert taint == {"metadata": {"resourceVersion": "7"},
                     "spec": {"taints": [{"key": "a", "effect": "NoSchedule"},
                                         {"key": DISRUPTED_TAINT, "effect": "NoSchedule"}]}}
    assert evict == ("pods", "default", "web")
    conditions = {c["type"]: c for c in status["status"]["conditions"]}
    assert conditions["Ready"]["status"] == "True"  # the other conditions are kept
    assert conditions["NodeRegistrationHealthy"] == {"type": "NodeRegistrationHealthy", "status": "False",
                                                     "reason": "LaunchTimeout", "message": "m",
                                                     "lastTransitionTime": "2026-11-29T18:00:00.000Z"}
    assert event == ("NodePool", "karpenter.sh/v1", "LaunchTimeout")


def test_a_stale_node_patch_is_left_for_the_next_round() -> None:
    kube = Kube(conflict=True)
    port, _ = fleet_of(kube)
    port.taint_node("n1", DISRUPTED_TAINT, "NoSchedule")  # no exception
    assert kube.calls == []
