"""Recovery after a restart or a leader change: adopt or clean what the last run left.

A process may die at any point of a launch: after the NodeClaim was written but before
the NIC, between NIC and VM, while the VM's long-running create ran, or after it ended
but before ``Launched=True`` was written. The next leader finds NodeClaims it did not
create (*orphans*: not in its own records) and decides for each from the claim's
``Launched`` condition and, when that is still ``Unknown``, from the VM of the claim's
deterministic name (``aks-<nodeclaim>``):

=====================  ==============================  ====================================
Launched               VM ``aks-<claim>``              action
=====================  ==============================  ====================================
True                   (not looked up)                 *resume*: track it; registration goes on
Unknown                Succeeded / Updating            *adopt*: ``Launched=True`` with its providerID
Unknown                Creating                        *wait*: the create is still running
Unknown                Failed                          *clean*: delete VM, NIC and claim
Unknown                none, claim older than grace    *clean*: delete NIC and claim
Unknown                none, younger                   *wait* (a create may still land)
False                  (any)                           *clean*
=====================  ==============================  ====================================

No VM is ever created here: a claim is either adopted with the VM it already has, or
deleted (its pods are planned again under a new claim name). Since VM names are derived
from claim names and a deleted claim's name is never reused, one claim never gets a
second VM. A create that lands after its claim was cleaned is a VM with no claim, which
garbage collection removes. ``decide`` is pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from provisioner.controller.fleet import ClaimInfo
from provisioner.controller.liveness import started_at
from provisioner.model.ports import VmInfo

__all__ = ["ADOPT", "CLEAN", "RESUME", "WAIT", "Recovery", "decide", "needs_lookup"]

RESUME = "resume"
ADOPT = "adopt"
CLEAN = "clean"
WAIT = "wait"


@dataclass(frozen=True, slots=True)
class Recovery:
    claim: ClaimInfo
    action: str  # resume | adopt | clean | wait
    vm: VmInfo | None = None
    why: str = ""


def _orphans(claims: Iterable[ClaimInfo], tracked: Iterable[str]) -> list[ClaimInfo]:
    mine = set(tracked)
    return [c for c in claims if c.name not in mine and not c.record.deleting]


def needs_lookup(claims: Iterable[ClaimInfo], tracked: Iterable[str]) -> list[str]:
    """Orphans whose VM must be looked up before deciding (``Launched`` still Unknown)."""
    return [c.name for c in _orphans(claims, tracked) if c.record.status_of("Launched") == "Unknown"]


def decide(
    claims: Iterable[ClaimInfo],
    tracked: Iterable[str],
    vms: Mapping[str, VmInfo | None],
    now: datetime,
    grace: timedelta,
) -> list[Recovery]:
    """One decision per orphan claim. ``vms`` maps claim name to its VM (None: absent); a claim
    missing from ``vms`` was not looked up (its VM read failed) and waits."""
    out: list[Recovery] = []
    for info in _orphans(claims, tracked):
        launched = info.record.status_of("Launched")
        if launched == "True":
            out.append(Recovery(info, RESUME, why="launched by an earlier run"))
            continue
        if launched == "False":
            out.append(Recovery(info, CLEAN, vms.get(info.name), why="its launch failed in an earlier run"))
            continue
        if info.name not in vms:
            out.append(Recovery(info, WAIT, why="its VM could not be read"))
            continue
        vm = vms[info.name]
        if vm is None:
            start = started_at(info)
            if start is None or now - start >= grace:
                out.append(Recovery(info, CLEAN, why="an earlier run left it with no VM"))
            else:
                out.append(Recovery(info, WAIT, why="a create may still be on its way"))
        elif vm.provisioning_state in ("Succeeded", "Updating"):
            out.append(Recovery(info, ADOPT, vm, why="its VM exists"))
        elif vm.provisioning_state in ("Creating", ""):
            out.append(Recovery(info, WAIT, vm, why="its VM is still being created"))
        else:
            out.append(Recovery(info, CLEAN, vm, why=f"its VM is {vm.provisioning_state}"))
    return out
