"""A bundle of the four schedulable resources, in base units.

``Resources`` is what a pod asks for, what a NodeClaim requests and what a node offers:
CPU in millicores, memory and ephemeral storage in bytes, pods as a count. It adds and
subtracts componentwise, and ``a.fits(b)`` says whether ``a`` fits within ``b`` in every
dimension (a request within an allocatable)::

    need = Resources.from_requests({"cpu": "10250m", "memory": "2981280Ki", "pods": "15"})
    need.fits(allocatable(catalog.get("Standard_D16ls_v5")))   # True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from provisioner.model.quantity import format_cpu, format_memory, parse_count, parse_cpu, parse_memory

__all__ = ["Resources"]


@dataclass(frozen=True, slots=True)
class Resources:
    cpu_m: int = 0
    memory: int = 0  # bytes
    pods: int = 0
    ephemeral_storage: int = 0  # bytes

    def __add__(self, other: Resources) -> Resources:
        return Resources(
            self.cpu_m + other.cpu_m,
            self.memory + other.memory,
            self.pods + other.pods,
            self.ephemeral_storage + other.ephemeral_storage,
        )

    def __sub__(self, other: Resources) -> Resources:
        """Componentwise difference; may go negative (``fits`` and ``is_negative`` tell)."""
        return Resources(
            self.cpu_m - other.cpu_m,
            self.memory - other.memory,
            self.pods - other.pods,
            self.ephemeral_storage - other.ephemeral_storage,
        )

    def times(self, count: int) -> Resources:
        """``count`` copies of this bundle: the requests of ``count`` identical pods."""
        return Resources(self.cpu_m * count, self.memory * count, self.pods * count, self.ephemeral_storage * count)

    def fits(self, other: Resources) -> bool:
        """True when this bundle fits within ``other`` in every dimension."""
        return (
            self.cpu_m <= other.cpu_m
            and self.memory <= other.memory
            and self.pods <= other.pods
            and self.ephemeral_storage <= other.ephemeral_storage
        )

    def is_negative(self) -> bool:
        return self.cpu_m < 0 or self.memory < 0 or self.pods < 0 or self.ephemeral_storage < 0

    def clamp(self) -> Resources:
        """Negative components set to zero."""
        return Resources(max(self.cpu_m, 0), max(self.memory, 0), max(self.pods, 0), max(self.ephemeral_storage, 0))

    @classmethod
    def from_requests(cls, requests: Mapping[str, str | int | float]) -> Resources:
        """From Kubernetes quantity strings keyed ``cpu``, ``memory``, ``pods``, ``ephemeral-storage``.

        Other keys (extended resources such as ``nvidia.com/gpu``) are ignored. A bad
        quantity raises ``QuantityError`` naming it.
        """
        return cls(
            cpu_m=parse_cpu(requests["cpu"]) if "cpu" in requests else 0,
            memory=parse_memory(requests["memory"]) if "memory" in requests else 0,
            pods=parse_count(requests["pods"]) if "pods" in requests else 0,
            ephemeral_storage=parse_memory(requests["ephemeral-storage"]) if "ephemeral-storage" in requests else 0,
        )

    def to_requests(self) -> dict[str, str]:
        """Kubernetes canonical quantity strings (zero components left out)."""
        out: dict[str, str] = {}
        if self.cpu_m:
            out["cpu"] = format_cpu(self.cpu_m)
        if self.memory:
            out["memory"] = format_memory(self.memory)
        if self.pods:
            out["pods"] = str(self.pods)
        if self.ephemeral_storage:
            out["ephemeral-storage"] = format_memory(self.ephemeral_storage)
        return out
