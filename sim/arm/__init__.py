"""A local Azure Resource Manager: compute, network and quota APIs over HTTPS, with faults.

See ``sim.arm.emulator.ArmEmulator`` (in-process) and ``karp-sim arm`` (a process).
"""

from __future__ import annotations

from sim.arm.emulator import DEFAULT_SUBSCRIPTION, ArmEmulator, ArmEndpoint
from sim.arm.faults import FaultPlan, FaultRule, load_faults
from sim.arm.service import RequestRecord
from sim.arm.state import Timings

__all__ = [
    "DEFAULT_SUBSCRIPTION",
    "ArmEmulator",
    "ArmEndpoint",
    "FaultPlan",
    "FaultRule",
    "RequestRecord",
    "Timings",
    "load_faults",
]
