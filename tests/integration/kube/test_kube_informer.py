"""Informer: list-then-watch, resume after a dropped watch, re-list after 410, handlers in order."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from provisioner.kube.cluster import KubeCluster
from provisioner.kube.connection import NODES, PODS, Resource
from sim.kube.emulator import KubeEmulator

CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", True)


def test_informer_syncs_and_follows_changes(kube: KubeEmulator, cluster: KubeCluster, wait_for: Callable[..., Any]) -> None:
    seen: list[tuple[str, str]] = []
    lock = threading.Lock()

    def note(kind: str) -> Callable[..., None]:
        def handler(*objs: dict[str, Any]) -> None:
            with lock:
                seen.append((kind, objs[-1]["metadata"]["name"]))
        return handler

    kube.create("configmaps", {"metadata": {"name": "before", "namespace": "default", "labels": {"inf": "1"}}})
    informer = cluster.informer(CONFIGMAPS, namespace="default", label_selector="inf=1", on_add=note("add"),
                                on_update=note("update"), on_delete=note("delete"), timeout_seconds=1).start()
    try:
        assert informer.wait_synced(5)
        assert informer.keys() == ["default/before"]
        cluster.create(CONFIGMAPS, {"metadata": {"name": "during", "labels": {"inf": "1"}}}, "default")
        cluster.patch(CONFIGMAPS, "before", {"data": {"k": "v"}}, "default")
        cluster.delete(CONFIGMAPS, "before", "default")
        wait_for(lambda: informer.keys() == ["default/during"])
        wait_for(lambda: ("delete", "before") in seen)
        assert seen == [("add", "before"), ("add", "during"), ("update", "before"), ("delete", "before")]
        # a watch that outlives its server timeout is resumed, not re-listed
        lists = informer.lists
        wait_for(lambda: informer.watches >= 3, timeout=5)
        assert informer.lists == lists
    finally:
        informer.stop()


def test_informer_survives_dropped_watch_and_relists_after_410(kube: KubeEmulator, cluster: KubeCluster,
                                                              wait_for: Callable[..., Any]) -> None:
    informer = cluster.informer(NODES, timeout_seconds=30, backoff=(0.01, 0.05)).start()
    try:
        assert informer.wait_synced(5)
        assert len(informer) == 3
        wait_for(lambda: informer.watching)
        watches = informer.watches
        kube.drop_watches()
        wait_for(lambda: informer.watches > watches)
        kube.create("nodes", {"metadata": {"name": "late-node"}})
        wait_for(lambda: informer.get("late-node") is not None)
        lists = informer.lists
        kube.faults.expire_watches(1, path_contains="/nodes")
        wait_for(lambda: informer.watching)
        kube.drop_watches()
        wait_for(lambda: informer.lists > lists)
        kube.store.delete(kube.kind("nodes"), "", "late-node")
        wait_for(lambda: informer.get("late-node") is None)
        # disconnected while history is compacted past its version: the resume gets 410 and it lists again
        lists = informer.lists
        kube.faults.fail(500, method="GET", path_contains="/api/v1/nodes", count=None)
        wait_for(lambda: informer.watching)
        kube.drop_watches()
        kube.create("nodes", {"metadata": {"name": "missed-node"}})
        kube.compact()
        kube.faults.clear()
        wait_for(lambda: informer.lists > lists)
        wait_for(lambda: informer.get("missed-node") is not None)
        assert len(informer) == 4
    finally:
        informer.stop()


def test_informer_with_field_selector_sees_pods_leave_it(kube: KubeEmulator, cluster: KubeCluster,
                                                         wait_for: Callable[..., Any]) -> None:
    deleted: list[str] = []
    informer = cluster.informer(PODS, field_selector="status.phase=Pending", on_delete=lambda o: deleted.append(o["metadata"]["name"]),
                                timeout_seconds=5).start()
    try:
        assert informer.wait_synced(5)
        kube.create("pods", {"metadata": {"name": "small", "namespace": "default"},
                             "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "10m"}}}]}})
        wait_for(lambda: "small" in deleted)  # Pending -> Running leaves the selector: a DELETED event
    finally:
        informer.stop()


def test_nodeclaim_informer_sees_status_patches(cluster: KubeCluster, wait_for: Callable[..., Any]) -> None:
    from provisioner.kube.connection import NODECLAIMS

    updates: list[dict[str, Any]] = []
    informer = cluster.informer(NODECLAIMS, on_update=lambda old, new: updates.append(new), timeout_seconds=5).start()
    try:
        assert informer.wait_synced(5)
        cluster.create_nodeclaim({"metadata": {"generateName": "general-purpose-"},
                                  "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
                                           "requirements": []}})
        name = wait_for(lambda: next((o["metadata"]["name"] for o in informer.objects()
                                      if o["metadata"]["name"].startswith("general-purpose-")), None))
        assert len(name) == len("general-purpose-") + 5
        cluster.patch_nodeclaim_status(name, {"status": {"conditions": [
            {"type": "Launched", "status": "True", "reason": "Launched", "lastTransitionTime": "2026-11-29T10:00:00Z"}]}})
        wait_for(lambda: any((u.get("status") or {}).get("conditions") for u in updates))
        assert informer.get(name)["status"]["conditions"][0]["type"] == "Launched"  # type: ignore[index]
        cluster.delete_nodeclaim(name)
        wait_for(lambda: informer.get(name) is None)
    finally:
        informer.stop()
