"""Garbage collection: cloud resources with no NodeClaim, and NodeClaims with no VM.

Every VM and NIC karp creates is named ``aks-<nodeclaim>`` and tagged with the cluster
(``karpenter.azure.com_cluster``), the NodePool and the NodeClaim. That tag is the proof
of ownership: **nothing whose cluster tag is not exactly ours is ever deleted**, whatever
its name says (a missing tag, another cluster's tag, a VM someone made by hand).

- a VM of ours whose NodeClaim does not exist, older than the grace period (5 min by
  default, measured from its ``timeCreated``, or from when this process first saw it),
  is deleted: a launch interrupted by a crash, a claim deleted while its create ran;
- a NIC of ours attached to no VM whose NodeClaim does not exist, seen for longer than
  the grace period, is deleted (its VM goes first, then it is free);
- a NodeClaim that says ``Launched=True`` but whose VM is gone is deleted with its Node
  (the caller confirms with one ``get_vm`` before it acts).

``collect`` is pure: listings, the claims known (the cluster's and those this process
has just written), the moments each resource was first seen, and ``now`` in; a
``GarbagePlan`` out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from provisioner.controller.fleet import ClaimInfo
from provisioner.controller.launch import TAG_CLUSTER, TAG_NODECLAIM, resource_name
from provisioner.model.ports import NicInfo, VmInfo

__all__ = ["GarbagePlan", "collect", "owned", "vm_name_of"]


@dataclass(frozen=True, slots=True)
class GarbagePlan:
    vms: tuple[str, ...] = ()
    nics: tuple[str, ...] = ()
    claims: tuple[tuple[str, str], ...] = ()  # (claim, node name or "")

    def __bool__(self) -> bool:
        return bool(self.vms or self.nics or self.claims)


def owned(tags: Mapping[str, str], cluster: str) -> bool:
    """True only when the resource's cluster tag is exactly ``cluster`` (never for "" or a missing tag)."""
    return bool(cluster) and tags.get(TAG_CLUSTER) == cluster


def vm_name_of(provider_id: str) -> str:
    """``azure:///subscriptions/…/virtualMachines/aks-x`` → ``aks-x``."""
    return provider_id.rstrip("/").rsplit("/", 1)[-1] if provider_id else ""


def _claim_of(name: str, tags: Mapping[str, str]) -> str:
    tagged = tags.get(TAG_NODECLAIM, "")
    if tagged:
        return tagged
    return name[len("aks-"):] if name.startswith("aks-") else ""


def collect(
    vms: Iterable[VmInfo],
    nics: Iterable[NicInfo],
    claims: Iterable[ClaimInfo],
    known_claims: Iterable[str],
    cluster: str,
    now: datetime,
    grace: timedelta,
    first_seen: Mapping[str, datetime],
) -> GarbagePlan:
    """What to delete now. ``first_seen`` maps ``vm:<name>`` / ``nic:<name>`` to when it was first listed."""
    vms = list(vms)
    claims = list(claims)
    known = {c.name for c in claims} | set(known_claims)
    live = {c.name for c in claims if not c.record.deleting} | set(known_claims)
    doomed_vms: list[str] = []
    vm_names = {vm.name for vm in vms if owned(vm.tags, cluster)}
    for vm in vms:
        if not owned(vm.tags, cluster) or vm.provisioning_state == "Deleting":
            continue
        claim = _claim_of(vm.name, vm.tags)
        if claim and claim in live and resource_name(claim) == vm.name:
            continue
        born = vm.created_at or first_seen.get(f"vm:{vm.name}") or now
        if now - born >= grace:
            doomed_vms.append(vm.name)
    doomed_nics: list[str] = []
    for nic in nics:
        if not owned(nic.tags, cluster):
            continue
        claim = _claim_of(nic.name, nic.tags)
        if claim and claim in known:
            continue
        if nic.vm_id and vm_name_of(nic.vm_id) in vm_names:
            continue  # attached: its VM is collected first
        born = first_seen.get(f"nic:{nic.name}") or now
        if now - born >= grace:
            doomed_nics.append(nic.name)
    gone: list[tuple[str, str]] = []
    for info in claims:
        record = info.record
        if record.deleting or record.status_of("Launched") != "True" or not record.provider_id:
            continue
        if vm_name_of(record.provider_id) not in vm_names:
            gone.append((record.name, record.node_name))
    return GarbagePlan(tuple(sorted(doomed_vms)), tuple(sorted(doomed_nics)), tuple(sorted(gone)))
