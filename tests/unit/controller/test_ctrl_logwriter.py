from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from provisioner.observability.logwriter import LogWriter


def test_ctrl_logwriter_writes_vocabulary_lines(tmp_path: Path, clock: Any) -> None:
    out = io.StringIO()
    path = tmp_path / "karp.log"
    seen: list[dict[str, Any]] = []
    log = LogWriter(stream=out, path=str(path), level="INFO", clock=clock)
    log.subscribe(seen.append)
    log.log("pods.found", Pods="default/a, default/b", duration="1ms")
    log.log("nic.creating", name="np-x", nic="aks-np-x")  # DEBUG: filtered from the outputs, not from listeners
    log.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    rec = json.loads(lines[0])
    assert rec["message"] == "found provisionable pod(s)"
    assert rec["event"] == "pods.found"
    assert rec["time"] == "2026-11-29T18:00:00.000Z"
    assert path.read_text().splitlines() == lines
    assert [r["event"] for r in seen] == ["pods.found", "nic.creating"]
