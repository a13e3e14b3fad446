"""The emulator's API semantics, driven through the official kubernetes client."""

from __future__ import annotations

import time

import pytest
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from sim.kube.emulator import KubeEmulator


def _pod(name: str, labels: dict[str, str] | None = None, cpu: str = "100m") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}]}}


@pytest.fixture(scope="module")
def ns(api: client.ApiClient) -> str:
    client.CoreV1Api(api).create_namespace({"metadata": {"name": "apitest"}})
    return "apitest"


def test_create_answers_201_and_duplicate_answers_409(api: client.ApiClient, ns: str) -> None:
    v1 = client.CoreV1Api(api)
    _, status, _ = v1.create_namespaced_pod_with_http_info(ns, _pod("dup"))
    assert status == 201
    with pytest.raises(ApiException) as info:
        v1.create_namespaced_pod(ns, _pod("dup"))
    assert info.value.status == 409
    assert '"reason":"AlreadyExists"' in info.value.body.replace(" ", "")


def test_missing_object_answers_404_with_status_body(api: client.ApiClient, ns: str) -> None:
    with pytest.raises(ApiException) as info:
        client.CoreV1Api(api).read_namespaced_pod("nope", ns)
    assert info.value.status == 404
    assert 'pods \\"nope\\" not found' in info.value.body or 'pods "nope" not found' in info.value.body


def test_stale_resource_version_answers_409(api: client.ApiClient, ns: str) -> None:
    v1 = client.CoreV1Api(api)
    created = v1.create_namespaced_config_map(ns, {"metadata": {"name": "cm"}, "data": {"a": "1"}})
    stale = created.metadata.resource_version
    current = v1.replace_namespaced_config_map("cm", ns, {"metadata": {"name": "cm", "resourceVersion": stale}, "data": {"a": "2"}})
    assert current.metadata.resource_version != stale
    with pytest.raises(ApiException) as info:
        v1.replace_namespaced_config_map("cm", ns, {"metadata": {"name": "cm", "resourceVersion": stale}, "data": {"a": "3"}})
    assert info.value.status == 409
    assert v1.read_namespaced_config_map("cm", ns).data == {"a": "2"}


def test_label_and_field_selectors(api: client.ApiClient, ns: str) -> None:
    v1 = client.CoreV1Api(api)
    for name, labels in (("sel-a", {"app": "web", "tier": "front"}), ("sel-b", {"app": "web"}), ("sel-c", {"app": "db"})):
        v1.create_namespaced_pod(ns, _pod(name, labels, cpu="100"))  # too big for any node: stays Pending

    def names(**kw: str) -> list[str]:
        return sorted(p.metadata.name for p in v1.list_namespaced_pod(ns, **kw).items if p.metadata.name.startswith("sel-"))

    assert names(label_selector="app=web") == ["sel-a", "sel-b"]
    assert names(label_selector="app==web,tier") == ["sel-a"]
    assert names(label_selector="app!=web") == ["sel-c"]
    assert names(label_selector="app in (db, cache)") == ["sel-c"]
    assert names(label_selector="app notin (db)") == ["sel-a", "sel-b"]
    assert names(label_selector="!tier") == ["sel-b", "sel-c"]
    assert names(field_selector="metadata.name=sel-b") == ["sel-b"]
    assert names(field_selector="status.phase=Pending,metadata.name!=sel-a") == ["sel-b", "sel-c"]
    assert names(field_selector="spec.nodeName=") == ["sel-a", "sel-b", "sel-c"]
    with pytest.raises(ApiException) as info:
        v1.list_namespaced_pod(ns, label_selector="app in (")
    assert info.value.status == 400


def test_watch_sends_initial_added_then_changes_and_ends_at_timeout(api: client.ApiClient, ns: str) -> None:
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_config_map(ns, {"metadata": {"name": "w1", "labels": {"w": "yes"}}})
    seen = []
    w = watch.Watch()
    for event in w.stream(v1.list_namespaced_config_map, ns, label_selector="w=yes", timeout_seconds=1):
        seen.append((event["type"], event["object"].metadata.name))
        if len(seen) == 1:
            v1.patch_namespaced_config_map("w1", ns, {"data": {"x": "1"}})
            v1.create_namespaced_config_map(ns, {"metadata": {"name": "w2", "labels": {"w": "yes"}}})
            v1.delete_namespaced_config_map("w1", ns)
    assert seen == [("ADDED", "w1"), ("MODIFIED", "w1"), ("ADDED", "w2"), ("DELETED", "w1")]


def test_watch_resumes_from_a_resource_version(api: client.ApiClient, ns: str) -> None:
    v1 = client.CoreV1Api(api)
    listed = v1.list_namespaced_config_map(ns)
    v1.create_namespaced_config_map(ns, {"metadata": {"name": "after-list"}})
    events = list(watch.Watch().stream(v1.list_namespaced_config_map, ns, resource_version=listed.metadata.resource_version, timeout_seconds=1))
    assert [(e["type"], e["object"].metadata.name) for e in events] == [("ADDED", "after-list")]


def test_watch_from_compacted_version_gets_410(kube: KubeEmulator, api: client.ApiClient, ns: str) -> None:
    v1 = client.CoreV1Api(api)
    old = v1.list_namespaced_config_map(ns).metadata.resource_version
    v1.create_namespaced_config_map(ns, {"metadata": {"name": "pre-compact"}})
    kube.compact()
    with pytest.raises(ApiException) as info:
        for _ in watch.Watch().stream(v1.list_namespaced_config_map, ns, resource_version=old, timeout_seconds=1):
            pass
    assert info.value.status == 410


def test_bookmarks_carry_the_current_version(kube: KubeEmulator, cluster, ns: str) -> None:  # type: ignore[no-untyped-def]
    from provisioner.kube.connection import Resource

    cms = Resource("", "v1", "configmaps", "ConfigMap", True)
    listed = cluster.raw.call("GET", cms.path(ns))
    events = list(cluster.raw.watch_lines(cms.path(ns), {"resourceVersion": listed["metadata"]["resourceVersion"],
                                                          "allowWatchBookmarks": "true", "timeoutSeconds": 1}, timeout=5))
    assert events and all(e["type"] == "BOOKMARK" for e in events)
    assert int(events[-1]["object"]["metadata"]["resourceVersion"]) >= int(listed["metadata"]["resourceVersion"])


def test_finalizers_hold_deletion_until_removed(api: client.ApiClient, ns: str) -> None:
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_config_map(ns, {"metadata": {"name": "fin", "finalizers": ["karpenter.sh/termination"]}})
    v1.delete_namespaced_config_map("fin", ns)
    held = v1.read_namespaced_config_map("fin", ns)
    assert held.metadata.deletion_timestamp is not None
    v1.patch_namespaced_config_map("fin", ns, [{"op": "remove", "path": "/metadata/finalizers"}])
    with pytest.raises(ApiException) as info:
        v1.read_namespaced_config_map("fin", ns)
    assert info.value.status == 404


def test_strategic_merge_patch_merges_conditions_by_type(api: client.ApiClient, ns: str) -> None:
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_pod(ns, _pod("smp", cpu="100"))
    v1.patch_namespaced_pod_status("smp", ns, {"status": {"conditions": [{"type": "Custom", "status": "True"}]}})
    pod = v1.read_namespaced_pod("smp", ns)
    types = {c.type: c.status for c in pod.status.conditions}
    assert types["Custom"] == "True" and types["PodScheduled"] == "False"
    v1.patch_namespaced_pod("smp", ns, {"metadata": {"finalizers": ["a"]}})
    v1.patch_namespaced_pod("smp", ns, {"metadata": {"finalizers": ["b"]}})
    assert v1.read_namespaced_pod("smp", ns).metadata.finalizers == ["a", "b"]
    v1.patch_namespaced_pod("smp", ns, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a", "b"]}})
    assert not v1.read_namespaced_pod("smp", ns).metadata.finalizers


def test_crds_from_the_repository_register_resources_with_status(kube: KubeEmulator, api: client.ApiClient) -> None:
    crds = client.ApiextensionsV1Api(api).list_custom_resource_definition().items
    assert {c.metadata.name for c in crds} >= {"nodepools.karpenter.sh", "nodeclaims.karpenter.sh", "aksnodeclasses.karpenter.azure.com"}
    co = client.CustomObjectsApi(api)
    claim = {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "general-purpose-x1"},
             "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
                      "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]}}
    created = co.create_cluster_custom_object("karpenter.sh", "v1", "nodeclaims", claim)
    assert created is not None and created["metadata"]["generation"] == 1
    status = {"status": {"conditions": [{"type": "Launched", "status": "Unknown", "reason": "SubscriptionQuotaReached",
                                         "message": "regional quota", "lastTransitionTime": "2026-11-29T10:00:00Z"}]}}
    co.patch_cluster_custom_object_status("karpenter.sh", "v1", "nodeclaims", "general-purpose-x1", status)
    # the main resource ignores status, the status subresource ignores spec
    co.patch_cluster_custom_object("karpenter.sh", "v1", "nodeclaims", "general-purpose-x1", {"status": {"nodeName": "x"}})
    got = co.get_cluster_custom_object("karpenter.sh", "v1", "nodeclaims", "general-purpose-x1")
    assert got["status"]["conditions"][0]["reason"] == "SubscriptionQuotaReached"
    assert "nodeName" not in got["status"]
    assert got["metadata"]["generation"] == 1
    pool = co.create_cluster_custom_object("karpenter.sh", "v1", "nodepools", {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "general-purpose"},
        "spec": {"template": {"spec": {"nodeClassRef": claim["spec"]["nodeClassRef"], "requirements": []}}}})
    assert pool["kind"] == "NodePool"
    nc = co.create_cluster_custom_object("karpenter.azure.com", "v1beta1", "aksnodeclasses", {
        "apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass", "metadata": {"name": "default"},
        "spec": {"imageFamily": "Ubuntu2204"}})
    assert nc["spec"]["imageFamily"] == "Ubuntu2204"


def test_discovery_lists_the_karpenter_groups(api: client.ApiClient) -> None:
    groups = {g.name: [v.version for v in g.versions] for g in client.ApisApi(api).get_api_versions().groups}
    assert groups["karpenter.sh"] == ["v1"] and groups["karpenter.azure.com"] == ["v1beta1"]
    resources = client.CustomObjectsApi(api).get_api_resources("karpenter.sh", "v1")
    names = {r.name for r in resources.resources}
    assert {"nodeclaims", "nodeclaims/status", "nodepools", "nodepools/status"} <= names


def test_injected_500_and_slow_answers(kube: KubeEmulator, api: client.ApiClient) -> None:
    v1 = client.CoreV1Api(api)
    kube.faults.fail(500, path_contains="/api/v1/nodes", count=1)
    with pytest.raises(ApiException) as info:
        v1.list_node()
    assert info.value.status == 500
    assert len(v1.list_node().items) >= 3  # one failure only
    kube.faults.slow(0.2, path_contains="/api/v1/nodes", count=1)
    started = time.monotonic()
    v1.list_node()
    assert time.monotonic() - started >= 0.2


def test_events_k8s_io_is_a_view_of_core_events(api: client.ApiClient, ns: str) -> None:
    new_api = client.EventsV1Api(api)
    new_api.create_namespaced_event(ns, {
        "metadata": {"name": "ev-view"}, "eventTime": "2026-11-29T10:00:00.000000Z", "reportingController": "karpenter",
        "reportingInstance": "karpenter-7d9f-abc", "action": "Launch", "reason": "Launched", "type": "Normal",
        "note": "launched nodeclaim", "regarding": {"kind": "NodeClaim", "name": "general-purpose-v1"}})
    core = client.CoreV1Api(api).read_namespaced_event("ev-view", ns)
    assert core.message == "launched nodeclaim" and core.involved_object.name == "general-purpose-v1"
    assert core.reporting_component == "karpenter"
    listed = new_api.list_namespaced_event(ns, field_selector="regarding.name=general-purpose-v1").items
    assert [e.note for e in listed] == ["launched nodeclaim"]
    new_api.patch_namespaced_event("ev-view", ns, {"note": "patched"})
    assert client.CoreV1Api(api).read_namespaced_event("ev-view", ns).message == "patched"
    events = list(watch.Watch().stream(new_api.list_namespaced_event, ns, field_selector="regarding.name=general-purpose-v1", timeout_seconds=1))
    assert [(e["type"], e["object"].note) for e in events] == [("ADDED", "patched")]


def test_lists_page_with_limit_and_continue(api: client.ApiClient, ns: str) -> None:
    v1 = client.CoreV1Api(api)
    for n in range(5):
        v1.create_namespaced_config_map(ns, {"metadata": {"name": f"page-{n}", "labels": {"page": "yes"}}})
    first = v1.list_namespaced_config_map(ns, label_selector="page=yes", limit=2)
    assert [c.metadata.name for c in first.items] == ["page-0", "page-1"]
    assert first.metadata.remaining_item_count == 3 and first.metadata._continue
    names = [c.metadata.name for c in first.items]
    token = first.metadata._continue
    while token:
        page = v1.list_namespaced_config_map(ns, label_selector="page=yes", limit=2, _continue=token)
        names += [c.metadata.name for c in page.items]
        token = page.metadata._continue
    assert names == [f"page-{n}" for n in range(5)]


def test_creating_a_crd_through_the_api_registers_its_resource() -> None:
    from pathlib import Path

    import yaml
    from kubernetes import config

    from sim.kube.emulator import DEFAULT_CRD_DIR

    with KubeEmulator(crds=[]) as bare:
        api = config.new_client_from_config(bare.kubeconfig)
        co = client.CustomObjectsApi(api)
        with pytest.raises(ApiException) as info:
            co.list_cluster_custom_object("karpenter.sh", "v1", "nodepools")
        assert info.value.status == 404
        for path in sorted(Path(DEFAULT_CRD_DIR).glob("*.yaml")):
            crd = client.ApiextensionsV1Api(api).create_custom_resource_definition(yaml.safe_load(path.read_text()))
            assert any(c.type == "Established" and c.status == "True" for c in crd.status.conditions)
        assert co.list_cluster_custom_object("karpenter.sh", "v1", "nodepools")["items"] == []
        assert co.list_cluster_custom_object("karpenter.azure.com", "v1beta1", "aksnodeclasses")["kind"] == "AKSNodeClassList"
        api.close()
