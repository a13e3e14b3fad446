"""A pod as the provisioner sees it: what it requests and what it demands of a node.

Only the scheduling-relevant parts of a Kubernetes Pod are kept: identity and owner, the
effective resource requests (``requests.pods`` is always at least 1: every pod takes a
slot), ``nodeSelector``, the *required* node-affinity terms (ORed; each a
``Requirements`` conjunction), tolerations, labels, priority and creation time.

``Pod.terms`` folds the ``nodeSelector`` into each affinity term, giving the alternatives a
node must satisfy one of. ``Pod.shape`` is the equivalence key the planner groups by: two
pods with the same shape are interchangeable for placement.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from provisioner.model.requirements import Requirements
from provisioner.model.resources import Resources
from provisioner.model.taints import Toleration

__all__ = ["DAEMONSET", "NODE", "Pod", "Shape", "frozen_map"]

DAEMONSET = "DaemonSet"
NODE = "Node"


def frozen_map(mapping: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    """A label map as sorted (key, value) pairs: hashable and order-independent."""
    return tuple(sorted((mapping or {}).items()))


class Shape:
    """A pod's equivalence key (requests, terms, tolerations, priority), hashed once."""

    __slots__ = ("__weakref__", "_hash", "key")

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key
        self._hash = hash(key)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Shape) and self._hash == other._hash and self.key == other.key)

    def __repr__(self) -> str:
        return f"Shape{self.key!r}"


# equal shapes share one object, so grouping pods compares identities; entries go with their last pod
_SHAPES: weakref.WeakValueDictionary[tuple[Any, ...], Shape] = weakref.WeakValueDictionary()


@dataclass(frozen=True, slots=True)
class Pod:
    namespace: str
    name: str
    requests: Resources = Resources(pods=1)
    uid: str = ""
    owner_kind: str = ""
    owner_name: str = ""
    node_selector: tuple[tuple[str, str], ...] = ()
    affinity_terms: tuple[Requirements, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    priority: int = 0
    created_at: datetime | None = None
    node_name: str = ""
    shape: Shape = field(init=False, repr=False, compare=False)
    key: str = field(init=False, repr=False, compare=False)  # namespace/name, as Karpenter's logs name a pod
    # the alternatives a node must satisfy one of (nodeSelector folded into each affinity term)
    terms: tuple[Requirements, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.requests.pods < 1:
            r = self.requests
            object.__setattr__(self, "requests", Resources(r.cpu_m, r.memory, 1, r.ephemeral_storage))
        if isinstance(self.node_selector, Mapping):
            object.__setattr__(self, "node_selector", frozen_map(self.node_selector))
        if isinstance(self.labels, Mapping):
            object.__setattr__(self, "labels", frozen_map(self.labels))
        object.__setattr__(self, "affinity_terms", tuple(self.affinity_terms))
        object.__setattr__(self, "tolerations", tuple(self.tolerations))
        object.__setattr__(self, "key", f"{self.namespace}/{self.name}")
        selector = Requirements.from_labels(dict(self.node_selector))
        terms = tuple(t.intersect(selector) for t in self.affinity_terms) if self.affinity_terms else (selector,)
        object.__setattr__(self, "terms", terms)
        shape = Shape((self.requests, terms, frozenset(self.tolerations), self.priority))
        object.__setattr__(self, "shape", _SHAPES.setdefault(shape.key, shape))

    @property
    def selector_map(self) -> dict[str, str]:
        return dict(self.node_selector)

    @property
    def label_map(self) -> dict[str, str]:
        return dict(self.labels)

    @property
    def is_daemonset_owned(self) -> bool:
        return self.owner_kind == DAEMONSET

    @property
    def is_node_owned(self) -> bool:
        """A static (mirror) pod: the kubelet owns it, no provisioner should act for it."""
        return self.owner_kind == NODE

    @property
    def is_bound(self) -> bool:
        return bool(self.node_name)

    @property
    def is_provisionable(self) -> bool:
        """Not bound, and not a pod that only a DaemonSet or the kubelet places."""
        return not self.is_bound and not self.is_daemonset_owned and not self.is_node_owned

    @property
    def owner(self) -> str:
        return f"{self.owner_kind}/{self.owner_name}" if self.owner_kind else ""
