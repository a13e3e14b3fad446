"""``karp-sim demo``: the founding scenario end to end, offline, in well under a minute.

Starts the Kubernetes emulator (the founding cluster, see ``sim.scenarios.founding``) and
the ARM emulator (westus2, regional quota 20 with 14 used), runs the provisioner in this
process with a log file, scales ``inflate`` to 10 and then to 20, and prints what
happened and karp-diagnose's findings on the log it wrote.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sim.scenarios import endpoints
from sim.scenarios.harness import Stage

__all__ = ["main", "run_demo"]

EPILOG = """
examples:
  karp-sim demo                      # quota-aware: no create is refused, blocked pods say why
  karp-sim demo --mode karpenter     # the reference behaviour: the 409 repeats
  karp-sim demo --json --log /tmp/founding.log
  karp-sim demo --hold 600 & karp-tui --sim   # watch it unfold on one screen
"""


def _printer(emit: Callable[[str], None]) -> Callable[[dict[str, Any]], None]:
    def show(rec: dict[str, Any]) -> None:
        event = rec.get("event")
        name = rec.get("name", "")
        if event == "nodeclaim.created":
            emit(f"  nodeclaim {name}: requests {rec.get('requests')}, {rec.get('instance-types')}")
        elif event == "vm.creating":
            emit(f"  creating VM {rec.get('vm')} ({rec.get('instance-type')})")
        elif event == "nodeclaim.launched":
            emit(f"  launched {name}: {rec.get('instance-type')} zone {rec.get('zone') or '-'}")
        elif event == "nodeclaim.launch_failed":
            emit(f"  FAILED {name}: {rec.get('reason')} ({rec.get('error.code')}) {_quota_text(rec.get('quota'))}")
        elif event == "nodeclaim.initialized":
            emit(f"  node ready for {name}")
        elif event == "quota.blocked" or event == "nodepool.limit_reached":
            emit(f"  {rec.get('pods')} pod(s) wait: {rec.get('error')}")

    return show


def _quota_text(quota: Any) -> str:
    if not isinstance(quota, dict):
        return ""
    return (f"quota {quota.get('name')}: limit {quota.get('limit')}, usage {quota.get('usage')}, "
            f"required {quota.get('required')}, new limit {quota.get('newLimit')}")


def _diagnose(log_path: str) -> tuple[list[dict[str, Any]], str]:
    """karp-diagnose's findings (JSON form) and a short text, or ([], why) when it is not available."""
    try:
        from diagnose import api
    except ImportError:
        return [], "karp-diagnose is not available in this build"
    try:
        report = api.diagnose([log_path])
        data = api.report_to_json(report)
    except Exception as e:  # the demo still reports what happened
        return [], f"karp-diagnose failed: {type(e).__name__}: {e}"
    findings = list(data.get("findings") or [])
    lines = [f"  [{f.get('severity')}] {f.get('category')}: {f.get('summary') or f.get('title') or ''}".rstrip()
             for f in findings]
    return findings, "\n".join(lines) if lines else "  no findings"


def run_demo(mode: str, log_path: str, emit: Callable[[str], None], steps: Sequence[int] = (10, 20),
             settle_max: float = 12.0, endpoints_path: Path | None = None, hold: float = 0.0) -> dict[str, Any]:
    stage = Stage(mode, quotas={"cores": 20}, usages={"cores": 14}, log_path=log_path, on_record=_printer(emit))
    with stage:
        assert stage.controller is not None
        if endpoints_path is not None:
            endpoints.write(endpoints_path, {"endpoint": stage.kube.endpoint, "kubeconfig": stage.kube.kubeconfig},
                            stage.arm.endpoint.as_dict(), [log_path])
            emit(f"endpoints for karp-tui --sim: {endpoints_path}")
        for replicas in steps:
            emit(f"scaling deployment inflate to {replicas} replicas")
            stage.scale(replicas)
            stage.settle(minimum=3.0, maximum=settle_max if mode == "quota-aware" else min(settle_max, 8.0), quiet=2.5)
            running, pending = stage.counts()
            emit(f"  -> inflate: {running} running, {pending} pending; nodes created so far: "
                 f"{stage.controller.lifecycle.launched_ok}")
        controller = stage.controller
        blocked = [e for e in stage.events("Pod", "FailedScheduling") if "quota" in e.get("message", "")]
        if hold > 0:
            emit(f"holding the emulators for {hold:g} s (karp-tui --sim can attach); Ctrl-C ends it")
            with contextlib.suppress(KeyboardInterrupt):
                time.sleep(hold)
        if endpoints_path is not None:
            endpoints.remove(endpoints_path)
    creates = sum(1 for r in stage.arm.request_log if r.op == "create_vm" and r.method == "PUT")
    running, pending = stage.counts()
    findings, text = _diagnose(log_path)
    return {
        "mode": mode,
        "pods": {"running": running, "pending": pending},
        "nodes_created": controller.lifecycle.launched_ok,
        "vm_create_attempts": creates,
        "quota_errors": controller.launcher.quota_errors,
        "log": log_path,
        "findings": findings,
        "_text": text,
        "_event": blocked[-1]["message"] if blocked else "",
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="karp-sim demo",
        description="Run the founding scenario (a Pending pod silently blocked by regional vCPU quota) end to end, "
        "offline: both emulators, the provisioner, inflate scaled to 10 then 20, and karp-diagnose on the log.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--mode", choices=("quota-aware", "karpenter"), default="quota-aware",
                        help="quota-aware (default) or karpenter: the reference, quota-blind behaviour")
    parser.add_argument("--log", metavar="PATH", default="", help="where to write the provisioner's JSON log "
                        "(default: a new file in the temp directory)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    parser.add_argument("--endpoints", metavar="PATH", default="",
                        help="where to write the endpoints file karp-tui --sim reads (default: $KARP_SIM_ENDPOINTS, "
                        "else $XDG_RUNTIME_DIR/karp-sim/endpoints.json, else /tmp/karp-sim/endpoints.json)")
    parser.add_argument("--hold", metavar="SECONDS", type=float, default=0.0,
                        help="keep the emulators running this long after the scenario, for karp-tui --sim")
    args = parser.parse_args(list(argv or []))
    logging.getLogger("provisioner.kube").setLevel(logging.ERROR)  # the demo prints its own progress
    log_path = args.log
    if log_path:
        parent = os.path.dirname(os.path.abspath(log_path))
        if not os.path.isdir(parent):
            print(f"karp-sim demo: --log {log_path}: directory {parent} does not exist", file=sys.stderr)
            return 2
    else:
        handle, log_path = tempfile.mkstemp(prefix=f"karp-demo-{args.mode}-", suffix=".log")
        os.close(handle)
    open(log_path, "w").close()

    lock = threading.Lock()

    def emit(line: str) -> None:
        stream = sys.stderr if args.json else sys.stdout
        with lock:
            stream.write(line + "\n")
            stream.flush()

    started = time.monotonic()
    emit(f"karp-sim demo ({args.mode}): westus2, regional vCPU quota 20 with 14 used; log {log_path}")
    endpoints_path = Path(args.endpoints) if args.endpoints else endpoints.default_path()
    summary = run_demo(args.mode, log_path, emit, endpoints_path=endpoints_path, hold=max(args.hold, 0.0))
    text, event = summary.pop("_text"), summary.pop("_event")
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
        return 0
    pods = summary["pods"]
    print(f"\nwhat happened ({time.monotonic() - started:.1f} s):")
    print(f"  inflate pods running: {pods['running']}, pending: {pods['pending']}")
    print(f"  nodes created: {summary['nodes_created']}, VM create attempts: {summary['vm_create_attempts']}, "
          f"refused for quota: {summary['quota_errors']}")
    if event:
        print(f"  a pending pod's Event: {event}")
    print(f"  log: {log_path}")
    print("\nkarp-diagnose on that log:")
    print(text)
    return 0
