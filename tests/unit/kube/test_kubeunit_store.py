"""The emulator store: resource versions, conflicts, history and 410, printing columns."""

from __future__ import annotations

import pytest

from sim.kube.kinds import BUILTINS
from sim.kube.store import ApiError, Store
from sim.kube.tables import age, json_path

CM = next(k for k in BUILTINS if k.plural == "configmaps")
NS = next(k for k in BUILTINS if k.plural == "namespaces")


def test_versions_conflicts_and_compaction() -> None:
    store = Store(history=2)
    store.create(NS, "", {"metadata": {"name": "d"}})
    first = store.create(CM, "d", {"metadata": {"name": "a"}})
    with pytest.raises(ApiError) as dup:
        store.create(CM, "d", {"metadata": {"name": "a"}})
    assert dup.value.status == 409 and dup.value.reason == "AlreadyExists"
    second = store.replace(CM, "d", "a", {"metadata": {"name": "a", "resourceVersion": first["metadata"]["resourceVersion"]}, "data": {"x": "1"}})
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    with pytest.raises(ApiError) as stale:
        store.replace(CM, "d", "a", {"metadata": {"name": "a", "resourceVersion": first["metadata"]["resourceVersion"]}})
    assert stale.value.status == 409
    same = store.replace(CM, "d", "a", {"metadata": {"name": "a"}, "data": {"x": "1"}})
    assert same["metadata"]["resourceVersion"] == second["metadata"]["resourceVersion"]  # no-op write keeps the version
    events, head = store.events_after(CM.key, int(first["metadata"]["resourceVersion"]))
    assert [e.type for e in events] == ["MODIFIED"] and head == store.resource_version
    for n in range(6):
        store.create(CM, "d", {"metadata": {"name": f"c{n}"}})
    with pytest.raises(ApiError) as gone:
        store.events_after(CM.key, int(first["metadata"]["resourceVersion"]))
    assert gone.value.status == 410
    with pytest.raises(ApiError) as missing_ns:
        store.create(CM, "nope", {"metadata": {"name": "x"}})
    assert missing_ns.value.status == 404


def test_json_path_and_age() -> None:
    obj = {"metadata": {"labels": {"node.kubernetes.io/instance-type": "Standard_D4s_v5"}},
           "status": {"conditions": [{"type": "Launched", "status": "True"}, {"type": "Ready", "status": "Unknown"}]}}
    assert json_path(obj, ".metadata.labels.node\\.kubernetes\\.io/instance-type") == "Standard_D4s_v5"
    assert json_path(obj, '.status.conditions[?(@.type=="Ready")].status') == "Unknown"
    assert json_path(obj, ".status.conditions[0].type") == "Launched"
    assert json_path(obj, ".spec.missing") is None
    assert age(None) == "<unknown>"
