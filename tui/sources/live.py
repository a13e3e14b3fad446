"""Live feeds: a cluster (through provisioner.kube), Azure quota (through karp-diagnose's
live wiring), and log files being written (followed like ``tail -f``).

``LiveSource`` is a ``Feed``: each poll reads the cluster (pending pods, NodeClaims, the
controller's log lines and Events that are new since the last poll), the quota, and the
new lines of every followed file, and says what karp-diagnose concludes over everything
read so far. Any failure becomes a ``FeedError``: the app shows it and retries.

``open_live`` builds one from karp-tui's flags; ``open_sim`` from karp-sim's endpoints
file. The readers are plain callables, so a feed can be tested without a cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import polars as pl

from diagnose import schema
from diagnose.api import LiveOptions, Unavailable, connect_live
from diagnose.events import events_from_objects
from diagnose.ingest import parse_lines
from diagnose.quota import QuotaSource
from provisioner.model.errors import KarpError
from provisioner.model.quota import QuotaSnapshot
from tui.sources.analysis import findings_for
from tui.sources.feed import FeedError, FeedUpdate
from tui.sources.kubeobjects import claims_from, pending_pods_from
from tui.state import Snapshot

__all__ = [
    "ClusterReading", "LiveSource", "LogTail", "SourceUnavailable", "events_frame", "kube_reader", "open_live", "quota_reader",
]


class SourceUnavailable(Exception):
    """A live source cannot be set up (missing layer, bad endpoints file); the message names it."""


@dataclass(slots=True)
class ClusterReading:
    """One read of the cluster: whole logs per container, Events, pending pods and NodeClaims."""

    pods: list[dict[str, Any]]
    nodeclaims: list[dict[str, Any]]
    logs: dict[str, str] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)


ClusterReader = Callable[[int | None], ClusterReading]  # argument: logs of the last N seconds only (None: all)
QuotaReader = Callable[[], QuotaSnapshot]


@dataclass(frozen=True, slots=True)
class _AlreadyRead:
    """A QuotaSource that answers with this poll's reading for its region, and asks the real one otherwise."""

    snapshot: QuotaSnapshot
    source: QuotaSource

    def read(self, region: str) -> QuotaSnapshot:
        if not region or region == self.snapshot.region:
            return self.snapshot
        return self.source.read(region)


def events_frame(events: list[dict[str, Any]], name: str = "events", first_line: int = 1) -> pl.DataFrame:
    """Kubernetes Events (``kubectl get events -o json`` items) as normalised rows (karp-diagnose's reader);
    the n-th Event read is "line" n of ``name``, so evidence references stay unique."""
    if not events:
        return schema.empty()
    lines = list(range(first_line, first_line + len(events)))
    return events_from_objects(events, name, lines).select(schema.COLUMNS)


class LogTail:
    """New complete lines of a file since the last read, as normalised records."""

    def __init__(self, path: str) -> None:
        self.path = path
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
            raise FeedError(f"{self.path}: {error.strerror or error}") from error
        end = chunk.rfind(b"\n")
        if end < 0:
            return schema.empty()
        self._offset += end + 1
        lines = chunk[: end + 1].decode("utf-8", errors="replace").splitlines()
        frame = parse_lines(lines, self.path).frame.with_columns(pl.col("line") + self._lines)
        self._lines += len(lines)
        return frame


@dataclass
class LiveSource:
    label: str
    interval: float
    cluster: ClusterReader | None = None
    quota: QuotaReader | None = None
    tails: tuple[LogTail, ...] = ()
    quota_source: QuotaSource | None = None  # handed to the analysis (current figures)
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    region: str = ""
    _seen: pl.DataFrame = field(default_factory=schema.empty)
    _log_lines: dict[str, int] = field(default_factory=dict)  # lines read so far, per container
    _last_line: dict[str, str] = field(default_factory=dict)  # the last line read, per container
    _complete = False  # the last poll read everything it asked for
    _event_keys: set[tuple[str, str]] = field(default_factory=set)

    def poll(self) -> FeedUpdate:
        snapshot = Snapshot(taken_at=self.clock())
        frames: list[pl.DataFrame] = []
        notes: list[str] = []
        try:
            if self.cluster is not None:
                # After a good poll, ask only for the logs of a window that overlaps it.
                reading = self.cluster(int(self.interval * 3) + 10 if self._complete else None)
                snapshot.pods = pending_pods_from(reading.pods)
                snapshot.claims = claims_from(reading.nodeclaims, self.region)
                frames.extend(self._new_log_lines(reading.logs))
                fresh = self._new_events(reading.events)
                frames.append(events_frame(fresh, "events", len(self._event_keys) - len(fresh) + 1))
                notes.append(f"{len(snapshot.pods)} pending pods, {len(snapshot.claims)} NodeClaims")
            if self.quota is not None:
                snapshot.quota = self.quota()
                notes.append(f"quota read {snapshot.quota.read_at:%H:%M:%S}")
        except FeedError:
            self._complete = False
            raise
        except Exception as error:  # the layers' own errors (connection refused, Forbidden …): shown, retried
            self._complete = False
            raise FeedError(f"{type(error).__name__}: {error}") from error
        self._complete = True
        frames.extend(tail.read() for tail in self.tails)
        frames = [f for f in frames if f.height]
        new = pl.concat(frames, how="vertical_relaxed").select(schema.COLUMNS) if frames else schema.empty()
        update = FeedUpdate(records=new.to_dicts(), snapshot=snapshot, note=", ".join(notes))
        if new.height or self.quota_source is not None:
            self._seen = pl.concat([self._seen, new], how="vertical_relaxed")
            source = self.quota_source
            if source is not None and snapshot.quota is not None:
                source = _AlreadyRead(snapshot.quota, source)  # no second read of the same quota
            update.findings = findings_for(self._seen, source)
        return update

    def _new_log_lines(self, logs: dict[str, str]) -> list[pl.DataFrame]:
        """Lines after the last one read before (the whole text when it is not there: a new
        container, or a gap), numbered on from the lines already read."""
        frames = []
        for name, text in logs.items():
            lines = text.splitlines()
            last = self._last_line.get(name)
            start = 0
            if last is not None:
                for index in range(len(lines) - 1, -1, -1):
                    if lines[index] == last:
                        start = index + 1
                        break
            fresh = lines[start:]
            if fresh:
                seen = self._log_lines.get(name, 0)
                frame = parse_lines(fresh, name).frame
                frames.append(frame.with_columns(pl.col("line") + seen))
                self._log_lines[name] = seen + len(fresh)
                self._last_line[name] = fresh[-1]
        return frames

    def _new_events(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        fresh = []
        for event in events:
            meta = event.get("metadata") or {}
            key = (str(meta.get("uid") or meta.get("name")), str(meta.get("resourceVersion") or event.get("count")))
            if key not in self._event_keys:
                self._event_keys.add(key)
                fresh.append(event)
        return fresh

    def close(self) -> None:
        return None


def kube_reader(kubeconfig: str | None, context: str | None, namespace: str) -> ClusterReader:
    try:
        from provisioner.kube.live import collect
    except ImportError as error:
        raise SourceUnavailable("--live: reading a cluster needs provisioner.kube.live, which is not installed") from error

    def read(since_seconds: int | None) -> ClusterReading:
        found = collect(kubeconfig, context, namespace, since_seconds=since_seconds)
        return ClusterReading(found.pending_pods, found.nodeclaims, found.logs, found.events)

    return read


def quota_reader(subscription: str, location: str, endpoint: str, ca: str) -> tuple[QuotaReader, QuotaSource]:
    try:
        wired = connect_live(
            LiveOptions(azure=True, subscription=subscription, location=location, azure_endpoint=endpoint, azure_ca=ca)
        )
    except (Unavailable, KarpError) as error:  # missing layer, bad --azure-ca …: one line for the user
        raise SourceUnavailable(str(error)) from error
    source = wired.quota_source
    if source is None:
        raise SourceUnavailable("--subscription: no quota reader could be set up")

    def read() -> QuotaSnapshot:
        return source.read(location)

    return read, source


def open_live(
    *,
    kubeconfig: str | None,
    context: str | None,
    namespace: str,
    subscription: str,
    location: str,
    azure_endpoint: str,
    azure_ca: str,
    interval: float,
) -> LiveSource:
    """The feed of ``karp-tui --live``: the cluster, and Azure quota when a subscription is given."""
    if bool(subscription) != bool(location):
        raise SourceUnavailable("--live: give --subscription and --location together to read quota")
    cluster = kube_reader(kubeconfig, context, namespace)
    quota, source = quota_reader(subscription, location, azure_endpoint, azure_ca) if subscription else (None, None)
    where = f"kubeconfig {kubeconfig}" if kubeconfig else "current kube context"
    where += f" ({context})" if context else ""
    region = f", {location}" if location else ""
    return LiveSource(
        label=f"live: {where}{region}", interval=interval, cluster=cluster, quota=quota,
        quota_source=source, region=location,
    )
