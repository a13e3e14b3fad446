"""Taints on nodes and the tolerations on pods that let them stay.

A taint ``key=value:Effect`` repels every pod without a matching toleration. For scheduling a
new pod only ``NoSchedule`` and ``NoExecute`` matter; ``PreferNoSchedule`` is a preference.
A toleration matches a taint when the effects agree (an empty effect matches all), and either
the operator is ``Exists`` (an empty key then matches every key) or the operator is ``Equal``
(the default) and key and value are equal.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "PREFER_NO_SCHEDULE",
    "Taint",
    "Toleration",
    "tolerates_all",
    "untolerated",
]

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    effect: str
    value: str = ""

    def __post_init__(self) -> None:
        if self.effect not in EFFECTS:
            raise ValueError(f"taint effect {self.effect!r} is not one of {', '.join(EFFECTS)}")
        if not self.key:
            raise ValueError("taint key is empty")

    @property
    def blocks_scheduling(self) -> bool:
        return self.effect in (NO_SCHEDULE, NO_EXECUTE)

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def __post_init__(self) -> None:
        if self.operator not in ("Equal", "Exists"):
            raise ValueError(f"toleration operator {self.operator!r} is not Equal or Exists")
        if self.effect and self.effect not in EFFECTS:
            raise ValueError(f"toleration effect {self.effect!r} is not one of {', '.join(EFFECTS)}")
        if self.operator == "Exists" and self.value:
            raise ValueError("a toleration with operator Exists takes no value")
        if not self.key and self.operator != "Exists":
            raise ValueError("a toleration without a key needs operator Exists")

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.operator == "Exists":
            return not self.key or self.key == taint.key
        return self.key == taint.key and self.value == taint.value


def untolerated(taints: Iterable[Taint], tolerations: Iterable[Toleration]) -> tuple[Taint, ...]:
    """The scheduling-blocking taints that none of the tolerations matches."""
    tols = tuple(tolerations)
    return tuple(t for t in taints if t.blocks_scheduling and not any(tol.tolerates(t) for tol in tols))


def tolerates_all(taints: Iterable[Taint], tolerations: Iterable[Toleration]) -> bool:
    return not untolerated(taints, tolerations)
