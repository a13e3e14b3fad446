"""Pod equivalence classes, and groups of classes that may share a node.

Two pending pods with the same ``Pod.shape`` (requests, node-selector terms, tolerations,
priority) are interchangeable for placement, so the planner handles a *class* with a count
instead of its pods one by one: the cost of planning grows with the number of distinct
shapes, not the number of pods. The owner is not part of the shape: no pod-to-pod
affinity or topology spread is honoured, so pods of different workloads with the same shape
are as interchangeable as pods of one workload.

Classes with the same terms and tolerations form a *group*: they are compatible with the
same NodePools and sizes, so they are packed together onto new nodes. Within a class, pods
are taken oldest first (then by namespace/name), so which pods of a class are placed when
only some fit does not depend on the order of the input.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from provisioner.model.pod import Pod
from provisioner.model.requirements import Requirements
from provisioner.model.taints import Toleration

__all__ = ["Group", "PodClass", "classify"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _age_key(pod: Pod) -> tuple[datetime, str, str]:
    created = pod.created_at or _EPOCH
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return (created, pod.namespace, pod.name)


@dataclass(slots=True)
class PodClass:
    pods: list[Pod]  # oldest first
    vector: tuple[int, int, int, int]
    priority: int
    taken: int = 0

    @property
    def first(self) -> Pod:
        return self.pods[0]

    @property
    def count(self) -> int:
        return len(self.pods)

    def take(self, n: int) -> list[Pod]:
        """The next ``n`` pods not yet given a place."""
        out = self.pods[self.taken : self.taken + n]
        self.taken += len(out)
        return out

    def rest(self) -> list[Pod]:
        return self.pods[self.taken :]


@dataclass(slots=True)
class Group:
    terms: tuple[Requirements, ...]
    tolerations: tuple[Toleration, ...]
    classes: list[PodClass] = field(default_factory=list)

    @property
    def priority(self) -> int:
        return max(c.priority for c in self.classes)

    @property
    def sample(self) -> Pod:
        return self.classes[0].first


def _class_key(c: PodClass) -> tuple[int, int, int, int, int, tuple[datetime, str, str]]:
    v = c.vector
    return (-c.priority, -v[0], -v[1], -v[3], -v[2], _age_key(c.first))


def classify(pods: Iterable[Pod]) -> list[Group]:
    """Pending pods as groups of classes; groups and classes in a deterministic order.

    Groups come highest priority first, then by their oldest pod; classes within a group
    most demanding first (priority, CPU, memory, ephemeral storage), as Karpenter sorts pods.
    """
    by_shape: dict[object, list[Pod]] = {}
    for pod in pods:
        bucket = by_shape.get(pod.shape)
        if bucket is None:
            by_shape[pod.shape] = [pod]
        else:
            bucket.append(pod)
    groups: dict[tuple[object, ...], Group] = {}
    for members in by_shape.values():
        if len(members) > 1:
            members.sort(key=_age_key)
        first = members[0]
        r = first.requests
        cls = PodClass(members, (r.cpu_m, r.memory, r.pods, r.ephemeral_storage), first.priority)
        tolerations = tuple(sorted(set(first.tolerations), key=repr))
        gkey = (first.terms, frozenset(tolerations))
        group = groups.get(gkey)
        if group is None:
            group = groups[gkey] = Group(first.terms, tolerations)
        group.classes.append(cls)
    out = list(groups.values())
    for group in out:
        group.classes.sort(key=_class_key)
    out.sort(key=lambda g: (-g.priority, _age_key(min((c.first for c in g.classes), key=_age_key))))
    return out
