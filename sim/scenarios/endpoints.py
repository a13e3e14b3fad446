"""The endpoints file a running scenario writes so that ``karp-tui --sim`` can attach to it.

One JSON object (format in docs/tui.md)::

    {"kube": <karp-sim kube's ready line>, "arm": <karp-sim arm's ready line>, "logs": [<log paths>]}

Written to ``--endpoints PATH``, else ``$KARP_SIM_ENDPOINTS``, else
``$XDG_RUNTIME_DIR/karp-sim/endpoints.json`` (``/tmp/karp-sim/endpoints.json``), and removed
when the scenario ends.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["default_path", "remove", "write"]


def default_path() -> Path:
    if explicit := os.environ.get("KARP_SIM_ENDPOINTS"):
        return Path(explicit)
    return Path(os.environ.get("XDG_RUNTIME_DIR") or "/tmp") / "karp-sim" / "endpoints.json"


def write(path: Path, kube: dict[str, Any], arm: dict[str, Any], logs: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps({"kube": kube, "arm": arm, "logs": logs}, indent=2), encoding="utf-8")
    temporary.replace(path)  # readers never see half a file


def remove(path: Path) -> None:
    path.unlink(missing_ok=True)
