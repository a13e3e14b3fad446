"""Attaching to a running karp-sim through its endpoints file.

The file is one JSON object; every part is optional::

    {"kube": {"endpoint": "http://127.0.0.1:PORT", "kubeconfig": "/tmp/…/kubeconfig"},
     "arm":  {"endpoint": "https://127.0.0.1:PORT", "ca_cert": "/tmp/…/ca.pem",
              "subscription": "…", "resource_group": "…", "location": "westus2"},
     "logs": ["/tmp/…/karp-provisioner.log"]}

``kube`` and ``arm`` are exactly what ``karp-sim kube`` and ``karp-sim arm`` print when
ready. Without a path, karp-tui reads ``$KARP_SIM_ENDPOINTS``, else
``$XDG_RUNTIME_DIR/karp-sim/endpoints.json`` (``/tmp/karp-sim/endpoints.json``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tui.sources.live import LiveSource, LogTail, SourceUnavailable, kube_reader, quota_reader

__all__ = ["default_endpoints", "open_sim"]


def default_endpoints() -> Path:
    if explicit := os.environ.get("KARP_SIM_ENDPOINTS"):
        return Path(explicit)
    return Path(os.environ.get("XDG_RUNTIME_DIR") or "/tmp") / "karp-sim" / "endpoints.json"


def _part(endpoints: dict[str, Any], key: str, file: Path) -> dict[str, Any]:
    part = endpoints.get(key) or {}
    if not isinstance(part, dict):
        raise SourceUnavailable(f"--sim: {file}: {key!r} must be an object")
    return part


def open_sim(path: str | None, interval: float, namespace: str = "karpenter") -> LiveSource:
    file = Path(path) if path else default_endpoints()
    try:
        endpoints = json.loads(file.read_text())
    except FileNotFoundError as error:
        raise SourceUnavailable(f"--sim: {file}: no such endpoints file; is karp-sim running?") from error
    except (OSError, ValueError) as error:
        raise SourceUnavailable(f"--sim: {file}: cannot read it as JSON ({error})") from error
    if not isinstance(endpoints, dict):
        raise SourceUnavailable(f"--sim: {file}: expected a JSON object")
    kube, arm = _part(endpoints, "kube", file), _part(endpoints, "arm", file)
    logs = endpoints.get("logs") or []
    if not isinstance(logs, list) or not all(isinstance(p, str) for p in logs):
        raise SourceUnavailable(f"--sim: {file}: 'logs' must be a list of paths")
    if not (kube or arm or logs):
        raise SourceUnavailable(f"--sim: {file}: names no kube, arm or logs to attach to")
    cluster = kube_reader(str(kube["kubeconfig"]), None, namespace) if kube.get("kubeconfig") else None
    quota = source = None
    location = str(arm.get("location") or "")
    if arm.get("endpoint") and arm.get("subscription"):
        quota, source = quota_reader(str(arm["subscription"]), location, str(arm["endpoint"]), str(arm.get("ca_cert") or ""))
    return LiveSource(
        label=f"sim: {file}", interval=interval, cluster=cluster, quota=quota, quota_source=source,
        tails=tuple(LogTail(p) for p in logs), region=location,
    )
