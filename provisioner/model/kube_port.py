"""The Kubernetes port: what the controller asks of the cluster, in our own words.

``provisioner.kube.KubeCluster`` implements ``Kube`` against a real API server (or
the emulator); tests may implement it in memory. Objects cross the port as raw
dicts shaped like the API's JSON (``{"metadata": …, "spec": …, "status": …}``),
never as SDK models. Refusals are ``KubeError`` subclasses:

    KubeError
    ├── NotFound          404: the object (or its kind: CRD not installed) does not exist
    ├── Conflict          409: stale resourceVersion on a write
    │   └── AlreadyExists 409: a create for a name that is taken
    ├── Forbidden         403: RBAC refused ``verb`` on ``resource``
    ├── Gone              410: a watch or list continuation expired; list again
    ├── NotLeader         this replica does not hold the leader lease: no writes
    └── KubeUnavailable   the server could not be reached or answered 5xx
"""

from __future__ import annotations

from typing import Any, Protocol

from provisioner.model.errors import KarpError

__all__ = ["AlreadyExists", "Conflict", "Forbidden", "Gone", "Kube", "KubeError", "KubeUnavailable", "NotFound", "NotLeader"]

Obj = dict[str, Any]


class KubeError(KarpError):
    """A refusal from the Kubernetes API (or from our own leader gate)."""

    status: int = 0

    def __init__(self, message: str, *, status: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.reason = reason


class NotFound(KubeError):
    status = 404


class Conflict(KubeError):
    status = 409


class AlreadyExists(Conflict):
    pass


class Gone(KubeError):
    status = 410


class KubeUnavailable(KubeError):
    status = 503


class NotLeader(KubeError):
    """Raised before any write while this replica does not hold the leader lease."""


class Forbidden(KubeError):
    status = 403

    def __init__(self, message: str, *, verb: str = "", resource: str = "", namespace: str = "") -> None:
        super().__init__(message, status=403, reason="Forbidden")
        self.verb = verb
        self.resource = resource
        self.namespace = namespace


class Kube(Protocol):
    """Cluster operations the controller needs. Writes raise ``NotLeader`` when not leading."""

    # NodeClaims (karpenter.sh/v1, cluster-scoped)
    def create_nodeclaim(self, claim: Obj) -> Obj: ...

    def get_nodeclaim(self, name: str) -> Obj | None: ...

    def list_nodeclaims(self, label_selector: str | None = None) -> list[Obj]: ...

    def patch_nodeclaim(self, name: str, patch: Obj) -> Obj:
        """JSON merge patch of metadata/spec (labels, annotations, finalizers…)."""
        ...

    def patch_nodeclaim_status(self, name: str, patch: Obj) -> Obj:
        """JSON merge patch of the status subresource (conditions, providerID, nodeName…)."""
        ...

    def delete_nodeclaim(self, name: str) -> None:
        """Request deletion; absent already is not an error."""
        ...

    # NodePools and node classes (read-only for the controller)
    def list_nodepools(self) -> list[Obj]: ...

    def patch_nodepool_status(self, name: str, patch: Obj) -> Obj: ...

    def list_nodeclasses(self) -> list[Obj]: ...

    # Nodes
    def list_nodes(self, label_selector: str | None = None) -> list[Obj]: ...

    def create_node(self, node: Obj) -> Obj: ...

    def patch_node(self, name: str, patch: Obj) -> Obj:
        """Strategic merge patch (labels, annotations, taints are replaced as a list)."""
        ...

    def delete_node(self, name: str) -> None: ...

    # Pods
    def list_pods(self, namespace: str | None = None, field_selector: str | None = None,
                  label_selector: str | None = None) -> list[Obj]: ...

    def pod_logs(self, namespace: str, name: str, container: str | None = None, previous: bool = False,
                 since_seconds: int | None = None) -> str: ...

    # Events
    def post_event(self, involved: Obj, type_: str, reason: str, message: str) -> None:
        """Record an Event about ``involved`` (an object or an object reference); never raises."""
        ...
