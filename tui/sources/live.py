"""Live feeds: a cluster (through provisioner.kube), Azure quota (through provisioner.azure),
and log files being written (followed like ``tail -f``).

``LiveSource`` is a ``Feed``: each poll reads a cluster snapshot, the quota, and the new
lines of every followed log, and says what karp-diagnose concludes over everything read
so far. Any failure of a part becomes a ``FeedError`` (the app shows it and retries).

``open_live`` builds one from karp-tui's flags; ``open_sim`` from a running karp-sim's
endpoints file. The cluster and Azure readers are passed in as plain callables, so the
feed can be tested without either.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from diagnose import schema
from provisioner.model.quota import QuotaSnapshot
from tui.sources.analysis import findings_for
from tui.sources.feed import FeedError, FeedUpdate
from tui.state import Snapshot

__all__ = ["LiveSource", "LogTail", "SourceUnavailable", "default_sim_endpoints", "open_live", "open_sim"]

ClusterReader = Callable[[], Snapshot]
QuotaReader = Callable[[], QuotaSnapshot]


class SourceUnavailable(Exception):
    """A live source cannot be set up (missing layer, bad endpoints file); the message names it."""


def _parse_lines(lines: list[str], file: str) -> pl.DataFrame:
    from diagnose.ingest import parse_lines

    return parse_lines(lines, file).frame


class LogTail:
    """New complete lines of a file since the last read, as normalised records."""

    def __init__(self, path: str, parse: Callable[[list[str], str], pl.DataFrame] = _parse_lines) -> None:
        self.path = path
        self._parse = parse
        self._offset = 0
        self._lines = 0

    def read(self) -> pl.DataFrame:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read()
        except FileNotFoundError:
            return schema.empty()
        except OSError as error:
            raise FeedError(f"{self.path}: {error.strerror}") from error
        end = chunk.rfind(b"\n")
        if end < 0:
            return schema.empty()
        self._offset += end + 1
        lines = chunk[: end + 1].decode("utf-8", errors="replace").splitlines()
        frame = self._parse(lines, self.path)
        frame = frame.with_columns((pl.col("line") + self._lines).alias("line"))
        self._lines += len(lines)
        return frame


@dataclass
class LiveSource:
    label: str
    interval: float
    cluster: ClusterReader | None = None
    quota: QuotaReader | None = None
    tails: tuple[LogTail, ...] = ()
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)

    def __post_init__(self) -> None:
        self._seen = schema.empty()

    def poll(self) -> FeedUpdate:
        snapshot = Snapshot(taken_at=self.clock())
        notes = []
        try:
            if self.cluster is not None:
                read = self.cluster()
                snapshot.pods, snapshot.claims = read.pods, read.claims
                notes.append(f"{len(read.pods or {})} pending pods")
            if self.quota is not None:
                snapshot.quota = self.quota()
                notes.append(f"quota read {snapshot.quota.read_at:%H:%M:%S}")
        except FeedError:
            raise
        except Exception as error:  # the layers' own errors: shown, retried
            raise FeedError(f"{type(error).__name__}: {error}") from error
        fresh = [tail.read() for tail in self.tails]
        new = pl.concat(fresh, how="vertical_relaxed") if fresh else schema.empty()
        update = FeedUpdate(records=new.to_dicts(), snapshot=snapshot, note=", ".join(notes))
        if len(new):
            self._seen = pl.concat([self._seen, new], how="vertical_relaxed")
            update.findings = findings_for(self._seen)
        return update

    def close(self) -> None:
        return None


def _cluster_reader(kubeconfig: str | None, server: str | None = None) -> ClusterReader:
    try:
        from provisioner.kube import live as kube_live  # type: ignore[attr-defined]
    except ImportError as error:
        raise SourceUnavailable(
            "--live: reading a cluster needs provisioner.kube.live, which this build does not have"
        ) from error
    collect: Callable[..., Any] = kube_live.collect

    def read() -> Snapshot:
        return _snapshot_from(collect(kubeconfig=kubeconfig, server=server))

    return read


def _snapshot_from(collected: Any) -> Snapshot:
    if isinstance(collected, Snapshot):
        return collected
    raise FeedError(f"unexpected cluster reading {type(collected).__name__}")


def _quota_reader(subscription: str, location: str, endpoint: str | None, ca: str | None) -> QuotaReader:
    try:
        from provisioner import azure  # noqa: F401
        from provisioner.azure import AzureCompute  # type: ignore[attr-defined]
    except ImportError as error:
        raise SourceUnavailable(
            "--subscription: reading quota needs provisioner.azure.AzureCompute, which this build does not have"
        ) from error
    compute = AzureCompute(
        {"subscription": subscription, "location": location, "endpoint": endpoint, "ca": ca}
    )

    def read() -> QuotaSnapshot:
        snapshot: QuotaSnapshot = compute.read_quota()
        return snapshot

    return read


def open_live(args: argparse.Namespace) -> LiveSource:
    if bool(args.subscription) != bool(args.location):
        raise SourceUnavailable("--live: give --subscription and --location together to read quota")
    cluster = _cluster_reader(args.kubeconfig)
    quota = (
        _quota_reader(args.subscription, args.location, args.azure_endpoint, args.azure_ca)
        if args.subscription
        else None
    )
    context = f"kubeconfig {args.kubeconfig}" if args.kubeconfig else "current kube context"
    region = f", {args.location}" if args.location else ""
    return LiveSource(label=f"live: {context}{region}", interval=args.interval, cluster=cluster, quota=quota)


def default_sim_endpoints() -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("TMPDIR") or "/tmp"
    return Path(os.environ.get("KARP_SIM_ENDPOINTS", Path(base) / "karp-sim" / "endpoints.json"))


def open_sim(path: str | None, interval: float) -> LiveSource:
    """Attach to karp-sim: its endpoints file names the Kubernetes and ARM URLs and the log files."""
    file = Path(path) if path else default_sim_endpoints()
    try:
        endpoints = json.loads(file.read_text())
    except FileNotFoundError as error:
        raise SourceUnavailable(f"--sim: {file}: no endpoints file; is karp-sim running?") from error
    except ValueError as error:
        raise SourceUnavailable(f"--sim: {file}: not JSON ({error})") from error
    if not isinstance(endpoints, dict):
        raise SourceUnavailable(f"--sim: {file}: expected a JSON object")
    logs = [str(p) for p in endpoints.get("logs", []) if isinstance(p, str)]
    tails = tuple(LogTail(p) for p in logs)
    cluster = None
    if endpoints.get("kubeconfig") or endpoints.get("kube"):
        try:
            cluster = _cluster_reader(endpoints.get("kubeconfig"), endpoints.get("kube"))
        except SourceUnavailable:
            if not tails:
                raise
    quota = None
    if endpoints.get("arm") and endpoints.get("subscription"):
        try:
            quota = _quota_reader(
                endpoints["subscription"], endpoints.get("location", ""), endpoints["arm"], endpoints.get("ca")
            )
        except SourceUnavailable:
            if not tails:
                raise
    return LiveSource(label=f"sim: {file}", interval=interval, cluster=cluster, quota=quota, tails=tails)
