"""Leader election on a Lease: one leader among contenders, a clean hand-over, and the write gate."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from provisioner.kube.cluster import KubeCluster
from provisioner.kube.connection import LEASES, NODECLAIMS
from provisioner.kube.leader import LeaderElector, LeaderGate
from provisioner.model.kube_port import NotLeader
from sim.kube.emulator import KubeEmulator


def test_two_contenders_one_leader_then_a_clean_hand_over(kube: KubeEmulator, cluster: KubeCluster,
                                                          wait_for: Callable[..., Any]) -> None:
    events: list[str] = []
    a = LeaderElector(cluster.raw, name="karp-test", namespace="karpenter", identity="a", lease_duration=3,
                      renew_deadline=2, retry_period=0.05, on_started_leading=lambda: events.append("a+"),
                      on_stopped_leading=lambda: events.append("a-"))
    b = LeaderElector(cluster.raw, name="karp-test", namespace="karpenter", identity="b", lease_duration=3,
                      renew_deadline=2, retry_period=0.05, on_started_leading=lambda: events.append("b+"))
    a.start()
    wait_for(lambda: a.is_leader)
    b.start()
    try:
        for _ in range(10):  # b keeps trying and must never lead while a renews
            assert b.try_acquire_or_renew() is False
            assert a.is_leader and not b.is_leader
        lease = cluster.get(LEASES, "karp-test", "karpenter")
        assert lease is not None and lease["spec"]["holderIdentity"] == "a"
        a.stop()  # releases the lease: b takes over well before the 3 s lease would expire
        assert not a.is_leader
        wait_for(lambda: b.is_leader, timeout=1.0)
        lease = cluster.get(LEASES, "karp-test", "karpenter")
        assert lease is not None and lease["spec"]["holderIdentity"] == "b"
        assert lease["spec"]["leaseTransitions"] == 1
        assert events == ["a+", "a-", "b+"]
    finally:
        b.stop()
        a.stop()


def test_gate_blocks_writes_when_not_leading(kube: KubeEmulator) -> None:
    now = [100.0]
    gate = LeaderGate(clock=lambda: now[0])
    guarded = KubeCluster.connect(kube.kubeconfig, gate=gate)
    claim = {"metadata": {"name": "gated"}, "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass",
                                                                       "name": "default"}, "requirements": []}}
    try:
        with pytest.raises(NotLeader):
            guarded.create_nodeclaim(claim)
        assert guarded.get_nodeclaim("gated") is None  # reads are always allowed
        gate.grant(10)
        assert guarded.create_nodeclaim(claim)["metadata"]["name"] == "gated"
        now[0] += 11  # no renewal within the deadline: writes stop even before anyone revokes
        with pytest.raises(NotLeader):
            guarded.delete_nodeclaim("gated")
        gate.grant(10)
        gate.revoke()
        with pytest.raises(NotLeader):
            guarded.patch_nodeclaim("gated", {"metadata": {"labels": {"a": "b"}}})
        assert kube.get(NODECLAIMS.plural, "gated") is not None
    finally:
        guarded.close()


def test_a_stalled_leader_loses_to_a_standby(kube: KubeEmulator, cluster: KubeCluster, wait_for: Callable[..., Any]) -> None:
    a = LeaderElector(cluster.raw, name="karp-stall", identity="a", lease_duration=0.6, renew_deadline=0.4, retry_period=0.05)
    assert a.try_acquire_or_renew()
    b = LeaderElector(cluster.raw, name="karp-stall", identity="b", lease_duration=0.6, renew_deadline=0.4, retry_period=0.05)
    b.start()
    try:
        assert not b.is_leader
        wait_for(lambda: b.is_leader, timeout=3)  # a never renews: its lease expires by b's clock
    finally:
        b.stop()
