"""Pure parts of provisioner.kube: error mapping, resource paths, the leader gate, object references."""

from __future__ import annotations

import pytest

from provisioner.kube.connection import LEASES, NODECLAIMS, PODS, _describe, error_from_status
from provisioner.kube.events import object_reference
from provisioner.kube.leader import LeaderElector, LeaderGate
from provisioner.model.kube_port import (
    AlreadyExists,
    Conflict,
    Forbidden,
    Gone,
    KubeUnavailable,
    NotFound,
    NotLeader,
)


def test_paths() -> None:
    assert PODS.path("default", "p", "log") == "/api/v1/namespaces/default/pods/p/log"
    assert NODECLAIMS.path(None, "x", "status") == "/apis/karpenter.sh/v1/nodeclaims/x/status"
    assert LEASES.path("karpenter") == "/apis/coordination.k8s.io/v1/namespaces/karpenter/leases"
    assert _describe("/api/v1/namespaces/karpenter/pods/k-1/log") == ("pods/log", "karpenter", "k-1")
    assert _describe("/apis/karpenter.sh/v1/nodeclaims") == ("nodeclaims.karpenter.sh", "", "")


def test_error_mapping() -> None:
    forbidden = error_from_status(403, b'{"kind":"Status","message":"pods is forbidden: User \\"x\\" cannot list resource \\"pods\\""}', "list", "pods", "karpenter")
    assert isinstance(forbidden, Forbidden) and forbidden.verb == "list" and forbidden.resource == "pods"
    assert "cannot list" in str(forbidden)
    assert isinstance(error_from_status(404, None, "get", "pods", name="p"), NotFound)
    assert isinstance(error_from_status(409, b'{"reason":"AlreadyExists"}', "create", "pods"), AlreadyExists)
    assert type(error_from_status(409, b'{"reason":"Conflict"}', "update", "pods")) is Conflict
    assert isinstance(error_from_status(410, b"{}", "watch", "pods"), Gone)
    assert isinstance(error_from_status(503, b"down", "list", "pods"), KubeUnavailable)


def test_gate_and_elector_settings() -> None:
    now = [0.0]
    gate = LeaderGate(clock=lambda: now[0])
    with pytest.raises(NotLeader):
        gate.check()
    gate.grant(5)
    gate.check()
    now[0] = 5.0
    assert not gate.is_leader
    with pytest.raises(ValueError, match="lease_duration > renew_deadline"):
        LeaderElector(None, lease_duration=5, renew_deadline=10)  # type: ignore[arg-type]


def test_object_reference() -> None:
    full = {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "n", "uid": "u", "resourceVersion": "7"}}
    assert object_reference(full) == {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": "n", "uid": "u", "resourceVersion": "7"}
    assert object_reference({"kind": "Pod", "name": "p", "namespace": "d", "extra": 1}) == {"kind": "Pod", "name": "p", "namespace": "d"}
