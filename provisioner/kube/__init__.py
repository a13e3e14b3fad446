"""The only code that imports the ``kubernetes`` client: connections and raw JSON requests
(``connection``), informers (``informer``), the controller's port (``cluster.KubeCluster``),
Events (``events``), leader election (``leader``) and what ``karp-diagnose --live`` reads
(``live``)."""

from __future__ import annotations

__all__ = ["diagnose_inputs"]


def diagnose_inputs(*, context: str | None = None, namespace: str | None = None, selector: str | None = None,
                    kubeconfig: str | None = None, since_seconds: int | None = None) -> list[tuple[str, list[str]]]:
    """``karp-diagnose --live`` input: (source name, lines) for every controller container log
    (a restarted container's previous log first), then the cluster's Events as JSON lines
    under the name ``events``. Raises ``Forbidden`` / ``NotInstalled`` / ``InputError``."""
    import orjson

    from provisioner.kube.live import NotInstalled, collect

    found = collect(kubeconfig or None, context or None, namespace or "karpenter", selector or None, since_seconds)
    names = sorted(found.logs, key=lambda name: (name.removesuffix("/previous"), not name.endswith("/previous")))
    inputs = [(name, found.logs[name].splitlines()) for name in names]
    if not inputs and not found.events:
        why = "; ".join(found.notes) or "no controller logs and no Events"
        raise NotInstalled(f"nothing to diagnose in this cluster: {why}")
    if found.events:
        inputs.append(("events", [orjson.dumps(event).decode() for event in found.events]))
    return inputs
