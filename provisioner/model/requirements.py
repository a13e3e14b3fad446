"""Node selector requirements: what a pod or a NodePool asks of a node's labels.

A ``Requirement`` is one ``matchExpressions`` entry: a label key, an operator (``In``, ``NotIn``,
``Exists``, ``DoesNotExist``, ``Gt``, ``Lt``) and values. ``Requirements`` is a conjunction of them
(one node selector term, or a NodePool's ``spec.template.spec.requirements``). The semantics are
Kubernetes' own: ``NotIn`` and ``DoesNotExist`` hold on a node without the label, ``Gt``/``Lt``
compare integers and fail when the label is missing or not an integer.

Two questions are answered here:

- ``Requirements.matches(labels)``: does a node with exactly these labels satisfy it?
- ``Requirements.compatible(other)``: could *some* node satisfy both (is the intersection
  non-empty, key by key)? This is how a pod's term is checked against a NodePool's
  requirements on keys that the instance type does not decide.

Legacy label keys (``beta.kubernetes.io/arch``, ``failure-domain.beta.kubernetes.io/zone`` ...)
are normalised to their current spelling, as Karpenter does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "ARCH",
    "CAPACITY_TYPE",
    "DOES_NOT_EXIST",
    "EXISTS",
    "GT",
    "IN",
    "INSTANCE_TYPE",
    "LT",
    "NODEPOOL",
    "NOT_IN",
    "OPERATORS",
    "OS",
    "SKU_LABEL_PREFIX",
    "ZONE",
    "Requirement",
    "Requirements",
    "normalize_key",
]

IN = "In"
NOT_IN = "NotIn"
EXISTS = "Exists"
DOES_NOT_EXIST = "DoesNotExist"
GT = "Gt"
LT = "Lt"
OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)

NODEPOOL = "karpenter.sh/nodepool"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ZONE = "topology.kubernetes.io/zone"
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
SKU_LABEL_PREFIX = "karpenter.azure.com/sku-"

_ALIASES = {
    "beta.kubernetes.io/arch": ARCH,
    "beta.kubernetes.io/os": OS,
    "beta.kubernetes.io/instance-type": INSTANCE_TYPE,
    "failure-domain.beta.kubernetes.io/zone": ZONE,
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}


def normalize_key(key: str) -> str:
    """The current spelling of a well-known label key (legacy beta keys are mapped)."""
    return _ALIASES.get(key, key)


def _as_int(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``{key, operator, values}`` expression; ``min_values`` is kept for NodePools."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    min_values: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", normalize_key(self.key))
        if self.operator not in OPERATORS:
            raise ValueError(f"operator {self.operator!r} is not one of {', '.join(OPERATORS)}")
        if self.operator in (IN, NOT_IN) and not self.values:
            raise ValueError(f"operator {self.operator} on {self.key!r} needs at least one value")
        if self.operator in (EXISTS, DOES_NOT_EXIST) and self.values:
            raise ValueError(f"operator {self.operator} on {self.key!r} takes no values")
        if self.operator in (GT, LT) and (len(self.values) != 1 or _as_int(self.values[0]) is None):
            raise ValueError(f"operator {self.operator} on {self.key!r} needs exactly one integer value")
        object.__setattr__(self, "values", tuple(sorted(set(self.values))))

    def allows(self, value: str | None) -> bool:
        """Whether a node whose label is ``value`` (None: no such label) satisfies this."""
        op = self.operator
        if op == IN:
            return value is not None and value in self.values
        if op == NOT_IN:
            return value is None or value not in self.values
        if op == EXISTS:
            return value is not None
        if op == DOES_NOT_EXIST:
            return value is None
        if value is None:
            return False
        number = _as_int(value)
        if number is None:
            return False
        bound = int(self.values[0])
        return number > bound if op == GT else number < bound

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.allows(labels.get(self.key))

    def __str__(self) -> str:
        if self.operator in (EXISTS, DOES_NOT_EXIST):
            return f"{self.key} {self.operator}"
        return f"{self.key} {self.operator} [{', '.join(self.values)}]"


def _satisfiable(reqs: Iterable[Requirement]) -> bool:
    """Whether one label value (or its absence) satisfies every requirement on a key."""
    allowed: set[str] | None = None
    excluded: set[str] = set()
    low: int | None = None
    high: int | None = None
    must_exist = False
    must_not_exist = False
    for req in reqs:
        op = req.operator
        if op == IN:
            allowed = set(req.values) if allowed is None else allowed & set(req.values)
            must_exist = True
        elif op == NOT_IN:
            excluded.update(req.values)
        elif op == EXISTS:
            must_exist = True
        elif op == DOES_NOT_EXIST:
            must_not_exist = True
        elif op == GT:
            bound = int(req.values[0])
            low = bound if low is None else max(low, bound)
            must_exist = True
        else:
            bound = int(req.values[0])
            high = bound if high is None else min(high, bound)
            must_exist = True
    if must_not_exist:
        return not must_exist
    if allowed is not None:
        candidates = allowed - excluded
        if low is not None or high is not None:
            numbers = [_as_int(v) for v in candidates]
            return any(
                n is not None and (low is None or n > low) and (high is None or n < high) for n in numbers
            )
        return bool(candidates)
    if low is not None or high is not None:
        lo = (low + 1) if low is not None else -(2**62)
        hi = (high - 1) if high is not None else 2**62
        if lo > hi:
            return False
        excluded_in_range = sum(1 for v in excluded if (n := _as_int(v)) is not None and lo <= n <= hi)
        return hi - lo + 1 > excluded_in_range
    return True


@dataclass(frozen=True, slots=True)
class Requirements:
    """A conjunction of requirements, in a canonical order so equal sets compare and hash equal."""

    items: tuple[Requirement, ...] = ()

    def __post_init__(self) -> None:
        ordered = tuple(sorted(set(self.items), key=lambda r: (r.key, r.operator, r.values)))
        object.__setattr__(self, "items", ordered)

    @classmethod
    def of(cls, *items: Requirement) -> Requirements:
        return cls(tuple(items))

    @classmethod
    def from_labels(cls, labels: Mapping[str, str]) -> Requirements:
        """A ``nodeSelector`` map as requirements: ``key In [value]`` for each entry."""
        return cls(tuple(Requirement(k, IN, (v,)) for k, v in labels.items()))

    def __bool__(self) -> bool:
        return bool(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def keys(self) -> frozenset[str]:
        return frozenset(r.key for r in self.items)

    def on(self, key: str) -> tuple[Requirement, ...]:
        key = normalize_key(key)
        return tuple(r for r in self.items if r.key == key)

    def only(self, keys: Iterable[str]) -> Requirements:
        wanted = set(keys)
        return Requirements(tuple(r for r in self.items if r.key in wanted))

    def without(self, keys: Iterable[str]) -> Requirements:
        unwanted = set(keys)
        return Requirements(tuple(r for r in self.items if r.key not in unwanted))

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.allows(labels.get(r.key)) for r in self.items)

    def failing(self, labels: Mapping[str, str]) -> tuple[Requirement, ...]:
        """The requirements a node with these labels does not satisfy (for messages)."""
        return tuple(r for r in self.items if not r.allows(labels.get(r.key)))

    def intersect(self, other: Requirements) -> Requirements:
        return Requirements(self.items + other.items)

    def compatible(self, other: Requirements) -> bool:
        """Whether some node could satisfy both sets (every shared key has a common value)."""
        return not self.conflicts(other)

    def conflicts(self, other: Requirements) -> tuple[str, ...]:
        """Keys on which the two sets cannot both hold; empty when they are compatible."""
        keys = self.keys() | other.keys()
        both = self.items + other.items
        return tuple(sorted(k for k in keys if not _satisfiable(r for r in both if r.key == k)))

    def allowed_values(self, key: str, universe: Iterable[str]) -> tuple[str, ...]:
        """The values of ``universe`` a label ``key`` may take under these requirements."""
        reqs = self.on(key)
        return tuple(v for v in universe if all(r.allows(v) for r in reqs))

    def __str__(self) -> str:
        return ", ".join(str(r) for r in self.items) or "(none)"
