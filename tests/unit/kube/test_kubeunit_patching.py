"""Merge, strategic merge and JSON patch as the emulator applies them."""

from __future__ import annotations

import pytest

from sim.kube.patching import PatchError, json_patch, merge_patch, strategic_merge_patch


def test_merge_patch_deletes_with_null_and_replaces_lists() -> None:
    doc = {"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"taints": [{"key": "x"}]}}
    out = merge_patch(doc, {"metadata": {"labels": {"a": None, "c": "3"}}, "spec": {"taints": []}})
    assert out == {"metadata": {"labels": {"b": "2", "c": "3"}}, "spec": {"taints": []}}
    assert doc["metadata"]["labels"] == {"a": "1", "b": "2"}  # input untouched


def test_strategic_merge_merges_conditions_by_type_and_finalizers_as_a_set() -> None:
    doc = {"metadata": {"finalizers": ["a"]},
           "status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "Launched", "status": "True"}]},
           "spec": {"taints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}, {"key": "keep", "effect": "NoSchedule"}]}}
    out = strategic_merge_patch(doc, {"metadata": {"finalizers": ["b", "a"]},
                                      "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Drifted", "$patch": "delete"}]},
                                      "spec": {"taints": [{"key": "keep", "effect": "NoSchedule"}]}})
    assert out["metadata"]["finalizers"] == ["a", "b"]
    assert out["status"]["conditions"] == [{"type": "Ready", "status": "True"}, {"type": "Launched", "status": "True"}]
    assert out["spec"]["taints"] == [{"key": "keep", "effect": "NoSchedule"}]  # no merge key in Kubernetes: replaced
    removed = strategic_merge_patch(out, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]},
                                          "status": {"conditions": [{"type": "Launched", "$patch": "delete"}]}})
    assert removed["metadata"]["finalizers"] == ["b"]
    assert [c["type"] for c in removed["status"]["conditions"]] == ["Ready"]


def test_json_patch_operations() -> None:
    doc = {"metadata": {"finalizers": ["a", "b"]}, "spec": {"replicas": 1}}
    out = json_patch(doc, [
        {"op": "test", "path": "/spec/replicas", "value": 1},
        {"op": "replace", "path": "/spec/replicas", "value": 5},
        {"op": "remove", "path": "/metadata/finalizers/0"},
        {"op": "add", "path": "/metadata/labels", "value": {"a/b": "c"}},
        {"op": "copy", "from": "/metadata/labels/a~1b", "path": "/metadata/copied"},
        {"op": "add", "path": "/metadata/finalizers/-", "value": "z"},
    ])
    assert out == {"metadata": {"finalizers": ["b", "z"], "labels": {"a/b": "c"}, "copied": "c"}, "spec": {"replicas": 5}}
    with pytest.raises(PatchError):
        json_patch(doc, [{"op": "test", "path": "/spec/replicas", "value": 2}])
    with pytest.raises(PatchError):
        json_patch(doc, [{"op": "remove", "path": "/nope"}])
