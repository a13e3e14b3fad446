"""``karp-sim kube``: serve the Kubernetes API emulator until interrupted."""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import threading
from pathlib import Path

import yaml

__all__ = ["main"]

EPILOG = """examples:
  karp-sim kube                                   # empty cluster on a free port
  karp-sim kube --nodes 3 --node-size Standard_D4s_v5
  karp-sim kube --port 6443 --kubeconfig /tmp/kubeconfig
  karp-sim kube --nodes 3 --kubeconfig /tmp/kc &   # then, once it has printed its line:
  KUBECONFIG=/tmp/kc kubectl get pods,nodes,nodeclaims,nodepools -A

When ready it prints one JSON line: {"endpoint": "http://127.0.0.1:PORT", "kubeconfig": "PATH"}.
The custom resource definitions in deploy/crds are installed unless --crds says otherwise.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="karp-sim kube",
        description="Serve a local Kubernetes API emulator (with scheduler and kubelet behaviour) over HTTP on 127.0.0.1.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=int, default=0, help="TCP port (default 0: a free port)")
    parser.add_argument("--nodes", type=int, default=0, help="Ready system nodes to start with (default 0)")
    parser.add_argument("--node-size", default="Standard_D4s_v5", help="VM size of the system nodes (default Standard_D4s_v5)")
    parser.add_argument("--region", default="westus2", help="region for topology labels and the size catalog (default westus2)")
    parser.add_argument("--crds", action="append", default=None, metavar="PATH",
                        help="CRD YAML file or directory to install (repeatable; default: deploy/crds)")
    parser.add_argument("--kubeconfig", default=None, metavar="PATH", help="where to write the kubeconfig (default: a temporary file)")
    parser.add_argument("--node-ready-delay", type=float, default=2.0, metavar="SECONDS",
                        help="time from a VM's node registering to Ready (default 2)")
    parser.add_argument("--node-gone-delay", type=float, default=2.0, metavar="SECONDS",
                        help="time from a VM's removal to its node's deletion (default 2)")
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.nodes < 0:
        print(f"karp-sim kube: --nodes must be 0 or more, not {args.nodes}", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"karp-sim kube: --port must be between 0 and 65535, not {args.port}", file=sys.stderr)
        return 2
    if not re.match(r"^Standard_[A-Z]+\d+", args.node_size):
        print(f"karp-sim kube: --node-size {args.node_size!r}: not an Azure VM size name (e.g. Standard_D4s_v5)", file=sys.stderr)
        return 2
    for path in args.crds or []:
        if not Path(path).exists():
            print(f"karp-sim kube: --crds {path}: no such file or directory", file=sys.stderr)
            return 2
    from sim.kube.emulator import KubeEmulator

    try:
        emulator = KubeEmulator(
            port=args.port, nodes=args.nodes, node_size=args.node_size, region=args.region, crds=args.crds,
            node_ready_delay=args.node_ready_delay, node_gone_delay=args.node_gone_delay, kubeconfig_path=args.kubeconfig,
        )
        emulator.start()
    except OSError as e:
        print(f"karp-sim kube: cannot listen on 127.0.0.1:{args.port}: {e.strerror}", file=sys.stderr)
        return 1
    except (yaml.YAMLError, KeyError, TypeError, ValueError) as e:
        print(f"karp-sim kube: --crds: not a usable CustomResourceDefinition: {e}".splitlines()[0], file=sys.stderr)
        return 2
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    print(json.dumps({"endpoint": emulator.endpoint, "kubeconfig": emulator.kubeconfig}), flush=True)
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    finally:
        emulator.stop()
    return 0
