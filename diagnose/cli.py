"""karp-diagnose: explain every stuck Pending pod from node-autoscaler logs and Events.

Exit codes: 0 no blocking finding, 1 at least one blocking finding, 2 bad usage or an
input that cannot be read (one line on stderr naming it).
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from typing import IO, NoReturn

from rich.progress import TaskID

from diagnose.api import LiveOptions, connect_live, diagnose
from diagnose.filters import Filters, parse_time
from diagnose.findings import CATEGORIES
from diagnose.quota import QuotaSource, SnapshotQuotaSource
from diagnose.render import FORMATS, render
from diagnose.render.json import exit_code
from provisioner.model.errors import KarpError

__all__ = ["main"]

PROG = "karp-diagnose"
_PROGRESS_MIN_BYTES = 8 * 2**20

EPILOG = f"""\
examples:
  {PROG} karpenter.log                      explain what blocks Pending pods
  {PROG} logs/ --events events.json         a directory of logs (.gz too) plus Kubernetes Events
  kubectl logs -n kube-system deploy/karpenter | {PROG} -
  {PROG} karpenter.log --format json        stable JSON (docs/diagnose-report.schema.json)
  {PROG} karpenter.log --format markdown --redact > issue.md
  {PROG} karpenter.log --since 2h --category regional-vcpu-quota,family-vcpu-quota
  {PROG} karpenter.log --pod 'default/inflate-*' --nodepool general-purpose
  {PROG} karpenter.log --quota-snapshot usage.json   (from: az vm list-usage -l westus2 -o json)

categories: {", ".join(CATEGORIES)}

exit codes: 0 no blocking finding, 1 at least one blocking finding, 2 bad usage or unreadable input
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{PROG}: {message} (see {PROG} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description=(
            "Explain every stuck Pending pod from node-autoscaler (Karpenter) logs and Kubernetes Events: "
            "which pods, which NodeClaim and instance type, which cloud error, the numbers, and the fix."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="log files, directories, .gz files, or - for stdin")
    parser.add_argument(
        "--events", action="append", default=[], metavar="PATH", help="Kubernetes Events as JSON (repeatable)"
    )
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    parser.add_argument("--redact", action="store_true", help="mask subscription/tenant/client ids and IP addresses")
    parser.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto", help="colour in text output (default: auto)"
    )
    group = parser.add_argument_group("filters")
    group.add_argument("--since", metavar="TIME", help="ignore input before TIME (ISO 8601, or relative: 30m, 2h, 1d)")
    group.add_argument("--until", metavar="TIME", help="ignore input after TIME (ISO 8601, or relative)")
    group.add_argument("--pod", action="append", default=[], metavar="POD", help="ns/name, name, pattern or workload")
    group.add_argument("--nodepool", action="append", default=[], metavar="NAME", help="NodePool name or pattern")
    group.add_argument("--nodeclaim", action="append", default=[], metavar="NAME", help="NodeClaim name or pattern")
    group.add_argument(
        "--category", action="append", default=[], metavar="NAME", help="finding category (repeatable or comma list)"
    )
    quota = parser.add_argument_group("quota figures")
    quota.add_argument(
        "--quota-snapshot", metavar="FILE", help="saved usages JSON (az vm list-usage -l <region> -o json) to compare"
    )
    quota.add_argument("--azure", action="store_true", help="also read current quota from Azure (usages API) and re-check each quota finding")
    quota.add_argument("--subscription", metavar="ID", default="", help="subscription for --azure (default: $AZURE_SUBSCRIPTION_ID)")
    quota.add_argument("--location", metavar="REGION", default="", help="region for --azure (default: the region the log names)")
    quota.add_argument("--azure-endpoint", metavar="URL", default="", help="ARM endpoint for --azure (default: public Azure; a 127.0.0.1 endpoint is a local karp-sim arm)")
    quota.add_argument("--azure-ca", metavar="FILE", default="", help="CA bundle for --azure-endpoint")
    live = parser.add_argument_group("live cluster (not available yet)")
    live.add_argument("--live", action="store_true", help="read controller logs and Events from the cluster")
    live.add_argument("--context", default="", help="kubeconfig context")
    live.add_argument("--namespace", default="", help="namespace of the node-autoscaler controller")
    live.add_argument("--selector", default="", help="label selector of the controller pods")
    live.add_argument("--kubeconfig", default="", help="kubeconfig file")
    return parser


def _color(choice: str, stream: IO[str]) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return stream.isatty()


class _Progress:
    """A progress bar on stderr for big inputs, only when stderr is a terminal."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            transient=True,
            console=Console(stderr=True),
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._task: TaskID | None = None

    def __call__(self, done: int, total: int) -> None:
        if total < _PROGRESS_MIN_BYTES and self._task is None:
            return
        if self._task is None:
            self._progress.start()
            self._task = self._progress.add_task("reading", total=total or None)
        phase = "analysing" if total and done >= total else "reading"
        self._progress.update(self._task, completed=done, total=total or None, description=phase)

    def close(self) -> None:
        if self._task is not None:
            self._progress.stop()


def _run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    now = datetime.now(UTC)
    options = LiveOptions(
        azure=args.azure,
        subscription=args.subscription,
        location=args.location,
        azure_endpoint=args.azure_endpoint,
        azure_ca=args.azure_ca,
        live=args.live,
        context=args.context,
        namespace=args.namespace,
        selector=args.selector,
        kubeconfig=args.kubeconfig,
    )
    filters = Filters(
        since=parse_time(args.since, now, "--since") if args.since else None,
        until=parse_time(args.until, now, "--until") if args.until else None,
        pods=tuple(args.pod),
        nodepools=tuple(args.nodepool),
        nodeclaims=tuple(args.nodeclaim),
        categories=tuple(args.category),
    )
    sources = connect_live(options)
    quota_source: QuotaSource | None = sources.quota_source
    if args.quota_snapshot:
        quota_source = SnapshotQuotaSource(args.quota_snapshot)
    if not args.paths and not args.events and not sources.inputs:
        raise KarpError("no input: give log files or directories, - for stdin, or --events FILE")
    progress = _Progress() if sys.stderr.isatty() else None
    try:
        report = diagnose(
            args.paths,
            args.events,
            filters=filters,
            quota_source=quota_source,
            redact=args.redact,
            stdin=sys.stdin.buffer if "-" in args.paths else None,
            progress=progress,
            now=now,
            subscription=args.subscription,
            inputs=sources.inputs,
        )
    finally:
        if progress is not None:
            progress.close()
    render(report, args.format, sys.stdout, color=_color(args.color, sys.stdout))
    sys.stdout.flush()
    return exit_code(report)


def main(argv: list[str] | None = None) -> int:
    try:
        return _run(list(sys.argv[1:] if argv is None else argv))
    except KarpError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as e:  # an input that vanished or a device error: name it, no traceback
        name = f" {e.filename}:" if getattr(e, "filename", None) else ""
        print(f"{PROG}:{name} {e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
