"""The emulated scheduler's filters and its FailedScheduling message."""

from __future__ import annotations

from collections import Counter

from sim.kube.scheduler import fits_reasons, pod_requests, tolerates, unschedulable_message

NODE = {"metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "westus2-1", "karpenter.azure.com/sku-cpu": "4"}},
        "spec": {}, "status": {"allocatable": {"cpu": "3860m", "memory": "12480512Ki", "pods": "250"},
                               "conditions": [{"type": "Ready", "status": "True"}]}}


def _pod(cpu: str = "1", **spec: object) -> dict:
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "256M"}}}], **spec}}


def test_message_matches_the_scheduler() -> None:
    assert unschedulable_message(3, Counter({"Insufficient cpu": 3}), 3) == (
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod.")
    mixed = unschedulable_message(3, Counter({"Insufficient cpu": 2, "node(s) didn't match Pod's node affinity/selector": 1}), 2)
    assert mixed == ("0/3 nodes are available: 2 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector. "
                     "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
                     "2 No preemption victims found for incoming pod.")
    assert unschedulable_message(0, Counter(), 0) == "no nodes available to schedule pods"


def test_requests_fit_and_insufficient() -> None:
    assert pod_requests(_pod("250m"))["cpu"] == 250
    assert fits_reasons(_pod("3"), NODE, {}) == []
    assert fits_reasons(_pod("1"), NODE, {"cpu": 3000}) == ["Insufficient cpu"]
    assert fits_reasons(_pod("1"), NODE, {"cpu": 0, "pods": 250}) == ["Too many pods"]


def test_affinity_operators_and_taints() -> None:
    gt = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "karpenter.azure.com/sku-cpu", "operator": "Gt", "values": ["8"]}]}]}}}
    assert fits_reasons(_pod(affinity=gt), NODE, {}) == ["node(s) didn't match Pod's node affinity/selector"]
    lt = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "karpenter.azure.com/sku-cpu", "operator": "Lt", "values": ["8"]},
                              {"key": "gpu", "operator": "DoesNotExist"}]}]}}}
    assert fits_reasons(_pod(affinity=lt), NODE, {}) == []
    tainted = {**NODE, "spec": {"taints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]}}
    assert fits_reasons(_pod(), tainted, {}) == ["node(s) had untolerated taint {karpenter.sh/unregistered: }"]
    assert fits_reasons(_pod(tolerations=[{"operator": "Exists"}]), tainted, {}) == []
    not_ready = {**NODE, "status": {**NODE["status"], "conditions": [{"type": "Ready", "status": "False"}]}}
    assert fits_reasons(_pod(), not_ready, {}) == ["node(s) had untolerated taint {node.kubernetes.io/not-ready: }"]
    assert tolerates([{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}], {"key": "k", "value": "v", "effect": "NoSchedule"})
    assert not tolerates([{"key": "k", "value": "w"}], {"key": "k", "value": "v", "effect": "NoSchedule"})
