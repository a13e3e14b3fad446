"""karp-diagnose as a library: ingest → correlate → rules → findings → (redacted) report.

``diagnose(paths, events)`` reads files, directories, ``.gz`` files and ``-`` (stdin) through
``diagnose.ingest``; ``analyse(frame, stats)`` does the rest on an already normalised
table (karp-tui calls it on live data). ``report_to_json`` gives the documented JSON form.

Live sources (quota read from Azure, logs and Events read from a cluster) are wired in one
place, :func:`connect_live`: it looks for the readers that ``provisioner.azure`` and
``provisioner.kube`` provide and reports them as not available when they are missing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, BinaryIO

import polars as pl

from diagnose.correlate import RELEVANT, correlate
from diagnose.filters import Filters
from diagnose.findings import Evidence, Finding, InputStats, Report
from diagnose.quota import QuotaSource, TolerantQuotaSource
from diagnose.redact import redact_report
from diagnose.render.json import report_to_json
from diagnose.rules import evaluate
from diagnose.rules.base import fmt_time
from provisioner.model.errors import InputError

__all__ = [
    "ANALYSED",
    "LiveOptions",
    "LiveSources",
    "Unavailable",
    "analyse",
    "connect_live",
    "diagnose",
    "report_to_json",
]

_UNPARSED_TEXT = 500
# The rows an analysis reads: those correlation walks, and the unparsed lines the report lists.
ANALYSED = (pl.col("parse_status") == "unparsed") | RELEVANT


class Unavailable(InputError):
    """A live source was asked for but this installation cannot provide it."""


@dataclass(frozen=True, slots=True)
class LiveOptions:
    azure: bool = False
    subscription: str = ""
    location: str = ""
    azure_endpoint: str = ""
    azure_ca: str = ""
    live: bool = False
    context: str = ""
    namespace: str = ""
    selector: str = ""
    kubeconfig: str = ""

    @property
    def wants_azure(self) -> bool:
        return self.azure

    @property
    def wants_cluster(self) -> bool:
        return self.live or bool(self.context or self.namespace or self.selector or self.kubeconfig)


@dataclass(frozen=True, slots=True)
class LiveSources:
    quota_source: QuotaSource | None = None
    inputs: list[tuple[str, Iterable[str]]] = field(default_factory=list)  # (display name, lines)


def _provided(module: str, attribute: str) -> Callable[..., Any] | None:
    try:
        found = getattr(importlib.import_module(module), attribute, None)
    except ImportError:
        return None
    return found if callable(found) else None


def connect_live(options: LiveOptions) -> LiveSources:
    """The single wiring point for live sources.

    ``--azure`` needs ``provisioner.azure.diagnose_quota_source(subscription=, location=,
    endpoint=, ca=) -> QuotaSource``; ``--live`` needs ``provisioner.kube.diagnose_inputs(
    context=, namespace=, selector=, kubeconfig=) -> list[(name, lines)]`` (controller logs and
    Events as JSON lines). Raises :class:`Unavailable` naming the flag when one is missing.
    """
    quota: QuotaSource | None = None
    inputs: list[tuple[str, Iterable[str]]] = []
    if options.wants_azure:
        factory = _provided("provisioner.azure", "diagnose_quota_source")
        if factory is None:
            raise Unavailable(
                "--azure: reading quota live from Azure is not available yet in this installation; "
                "use the figures in the log, or --quota-snapshot FILE (from az vm list-usage -l <region> -o json)"
            )
        quota = factory(
            subscription=options.subscription,
            location=options.location,
            endpoint=options.azure_endpoint,
            ca=options.azure_ca,
        )
    if options.wants_cluster:
        reader = _provided("provisioner.kube", "diagnose_inputs")
        if reader is None:
            raise Unavailable(
                "--live: reading logs and Events from a cluster is not available yet in this installation; "
                "save them first (kubectl logs -n <ns> deploy/<controller> > karpenter.log; "
                "kubectl get events -A -o json > events.json) and pass the files"
            )
        inputs = list(
            reader(
                context=options.context,
                namespace=options.namespace,
                selector=options.selector,
                kubeconfig=options.kubeconfig,
            )
        )
    return LiveSources(quota, inputs)


def _unparsed_refs(frame: pl.DataFrame, stats: InputStats) -> list[Evidence]:
    """Every unparsed line with its text (the stats carry references only)."""
    rows = frame.filter(pl.col("parse_status") == "unparsed").select("file", "line", "raw")
    if rows.height == 0:
        return list(stats.unparsed_refs)
    return [
        Evidence(str(file or "-"), int(line or 0), "", (raw or "")[:_UNPARSED_TEXT])
        for file, line, raw in rows.iter_rows()
    ]


def _notes(findings: list[Finding], quota_source: QuotaSource | None) -> list[str]:
    notes: list[str] = []
    logged = sorted({f.quota.read_at for f in findings if f.quota is not None and f.quota.read_at is not None})
    if logged:
        first, last = fmt_time(logged[0]), fmt_time(logged[-1])
        when = first if first == last else f"{first} to {last}"
        notes.append(f"Quota figures are the log's own error text, as logged at {when}.")
    failure = getattr(quota_source, "failure", "")
    if failure:
        label = {"snapshot": "the saved usages file", "azure": "Azure"}.get(_source_name(quota_source), "the quota source")
        notes.append(f"Current quota figures could not be read from {label}: {failure}. The figures shown are the log's own.")
    if quota_source is not None:
        live = [f.quota.live for f in findings if f.quota is not None and f.quota.live is not None]
        if live:
            label = {"snapshot": "from the saved usages file", "azure": "from Azure"}.get(_source_name(quota_source), "")
            notes.append(f"Current quota figures read at {fmt_time(live[0].read_at)} {label}.".replace(" .", "."))
    return notes


def analyse(
    frame: pl.DataFrame,
    stats: InputStats,
    *,
    filters: Filters | None = None,
    quota_source: QuotaSource | None = None,
    redact: bool = False,
    now: datetime | None = None,
    subscription: str = "",
) -> Report:
    """Findings for an already ingested table (see ``diagnose.schema``)."""
    filters = filters or Filters()
    if quota_source is not None and not isinstance(quota_source, TolerantQuotaSource):
        quota_source = TolerantQuotaSource(quota_source)
    window = filters.window(frame)
    correlation = correlate(window, summarise=True)
    everything = evaluate(correlation, quota_source=quota_source, subscription=subscription)
    findings = [f for f in everything if filters.keeps(f)]
    unparsed = _unparsed_refs(frame, stats)
    report = Report(
        input=InputStats(
            lines=stats.lines,
            parsed=stats.parsed,
            repaired=stats.repaired,
            unparsed=stats.unparsed,
            blank=stats.blank,
            files=list(stats.files),
            events=stats.events,
            unparsed_refs=unparsed,
            repaired_refs=list(stats.repaired_refs),
        ),
        findings=findings,
        generated_at=now or datetime.now(UTC),
        notes=_notes(findings, quota_source),
        filters=filters.describe(),
        hidden=len(everything) - len(findings),
        quota_source=_source_name(quota_source),
    )
    return redact_report(report) if redact else report


def _source_name(quota_source: QuotaSource | None) -> str:
    if quota_source is None:
        return "log"
    source = str(getattr(quota_source, "source", ""))
    return source if source in ("log", "snapshot", "azure") else "azure"  # any other reader is a live one


def _merge(parts: list[tuple[pl.DataFrame, InputStats]]) -> tuple[pl.DataFrame, InputStats]:
    """One table and one set of counts from several ingested inputs."""
    frames = [frame for frame, _ in parts if frame.height]
    if len(frames) > 1:  # lean (categorical) and plain tables together: plain text
        frames = [f.with_columns(pl.col(pl.Categorical).cast(pl.Utf8)) for f in frames]
    frame = pl.concat(frames, how="vertical_relaxed") if frames else parts[0][0]
    if len(frames) > 1:
        frame = frame.sort("time", nulls_last=True, maintain_order=True)
    stats = [s for _, s in parts]
    merged = InputStats(
        lines=sum(s.lines for s in stats),
        parsed=sum(s.parsed for s in stats),
        repaired=sum(s.repaired for s in stats),
        unparsed=sum(s.unparsed for s in stats),
        files=[f for s in stats for f in s.files],
        events=sum(s.events for s in stats),
        unparsed_refs=[r for s in stats for r in s.unparsed_refs],
        repaired_refs=[r for s in stats for r in s.repaired_refs],
        blank=sum(s.blank for s in stats),
    )
    return frame, merged


def _event_objects(lines: list[str]) -> list[dict[str, Any]] | None:
    """The lines as Kubernetes Event objects (one JSON object a line), or None if they are not."""
    import orjson

    items: list[dict[str, Any]] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            item = orjson.loads(line)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(item, dict) or item.get("kind", "Event") != "Event" or not (
            "involvedObject" in item or "regarding" in item
        ):
            return None
        items.append(item)
    return items or None


def _parse_input(name: str, lines: list[str]) -> tuple[pl.DataFrame, InputStats]:
    """An in-memory input: Kubernetes Events (as a live cluster gives them) or log lines."""
    from diagnose import ingest
    from diagnose.events import events_from_objects

    items = _event_objects(lines)
    if items is None:
        parsed = ingest.parse_lines(lines, name)
        return parsed.frame, parsed.stats
    frame = events_from_objects(items, name)
    return frame, InputStats(lines=0, parsed=0, repaired=0, unparsed=0, files=[name], events=len(items))


def diagnose(
    paths: Sequence[str],
    events: Sequence[str] = (),
    *,
    filters: Filters | None = None,
    quota_source: QuotaSource | None = None,
    redact: bool = False,
    stdin: BinaryIO | None = None,
    progress: Callable[..., None] | None = None,
    now: datetime | None = None,
    subscription: str = "",
    inputs: Sequence[tuple[str, Iterable[str]]] = (),
) -> Report:
    """Read the inputs (files, directories, ``.gz``, ``-`` for stdin; ``events``: Kubernetes
    Events as JSON; ``inputs``: (name, lines) already in memory, e.g. from a live cluster)
    and explain every stuck Pending pod they show.

    Raises ``InputError`` naming the input when one cannot be read."""
    from diagnose import ingest

    parts: list[tuple[pl.DataFrame, InputStats]] = []
    if paths or events or not inputs:
        loaded = ingest.load_lean(list(paths), list(events), keep=ANALYSED, stdin=stdin, progress=progress)
        parts.append((loaded.frame, loaded.stats))
    for name, lines in inputs:
        parts.append(_parse_input(name, list(lines)))
    frame, stats = _merge(parts) if len(parts) > 1 else parts[0]
    return analyse(
        frame,
        stats,
        filters=filters,
        quota_source=quota_source,
        redact=redact,
        now=now,
        subscription=subscription,
    )
