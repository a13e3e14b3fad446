"""karp-tui's command line: replay files, follow a live cluster and Azure, or attach to karp-sim."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from tui.sources.replay import Timeline, load_frame

__all__ = ["SystemClock", "build_parser", "main"]

EPILOG = """\
examples:
  karp-tui fixtures/logs/seed-karpenter-2023-11-24.log
      replay a saved Karpenter log; [ ] step, space plays, + - change the speed
  karp-tui karpenter.log --events events.json
      replay a log together with a `kubectl get events -o json` dump
  karp-tui --live --subscription 00000000-0000-0000-0000-000000000000 --location westus2
      follow the current kube context and the subscription's vCPU quota
  karp-tui --sim
      attach to a running karp-sim (reads its endpoints file)

karp-tui only reads: it never changes the cluster or the subscription.
keys: 1-5 panes, / filter, ? help, q quit.
"""


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="karp-tui",
        description="Pending pods, NodeClaims, quota headroom and findings, replayed from logs or live.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="log files to replay (plain or .gz)")
    parser.add_argument("--events", action="append", default=[], metavar="FILE",
                        help="Kubernetes Events dump (kubectl get events -o json) to replay with the logs; repeatable")
    mode = parser.add_argument_group("live")
    mode.add_argument("--live", action="store_true", help="follow a cluster and Azure instead of replaying files")
    mode.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig to use (default: $KUBECONFIG or ~/.kube/config)")
    mode.add_argument("--context", metavar="NAME", help="kube context to use (default: the current context)")
    mode.add_argument("--namespace", default="karpenter", metavar="NS",
                      help="namespace of the Karpenter / karp-provisioner pods whose logs to follow (default karpenter)")
    mode.add_argument("--subscription", metavar="ID", help="Azure subscription whose vCPU quota to read")
    mode.add_argument("--location", metavar="REGION", help="Azure region of the quota (e.g. westus2)")
    mode.add_argument("--azure-endpoint", metavar="URL", help="Azure Resource Manager endpoint (default: public cloud)")
    mode.add_argument("--azure-ca", metavar="FILE", help="CA bundle to trust for --azure-endpoint")
    mode.add_argument("--interval", type=float, default=5.0, metavar="SECONDS", help="seconds between polls (default 5)")
    mode.add_argument("--sim", nargs="?", const="", metavar="ENDPOINTS",
                      help="attach to a running karp-sim; optional path of its endpoints JSON")
    return parser


def _fail(message: str) -> int:
    print(f"karp-tui: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    modes = sum(bool(m) for m in (args.paths or args.events, args.live, args.sim is not None))
    if modes != 1:
        return _fail("give log files to replay, or --live, or --sim (exactly one of them); see --help")
    live_only = [f"--{name.replace('_', '-')}" for name in ("kubeconfig", "context", "subscription", "location",
                                                            "azure_endpoint", "azure_ca") if getattr(args, name)]
    if live_only and not args.live:
        return _fail(f"{live_only[0]} only applies to --live")
    if args.interval <= 0:
        return _fail(f"--interval must be a positive number of seconds, not {args.interval:g}")
    from tui.app import KarpTui

    if args.paths or args.events:
        for path in [*args.paths, *args.events]:
            if path == "-":
                return _fail("-: karp-tui cannot read a log from stdin (the terminal is its input); save it to a file")
            if not Path(path).exists():
                return _fail(f"{path}: no such file or directory")
        paths, events = list(args.paths), list(args.events)

        def load(progress: Callable[[int, int], None]) -> Timeline:
            return Timeline(*load_frame(paths, events, progress))

        KarpTui(load=load).run()
        return 0
    from tui.sources.live import LiveSource, SourceUnavailable, open_live
    from tui.sources.sim import open_sim

    try:
        feed: LiveSource
        if args.sim is not None:
            feed = open_sim(args.sim or None, args.interval, args.namespace)
        else:
            feed = open_live(
                kubeconfig=args.kubeconfig, context=args.context, namespace=args.namespace,
                subscription=args.subscription or "", location=args.location or "",
                azure_endpoint=args.azure_endpoint or "", azure_ca=args.azure_ca or "", interval=args.interval,
            )
    except SourceUnavailable as error:
        return _fail(str(error))
    KarpTui(feed=feed, clock=SystemClock()).run()
    return 0
