"""The human report: a few lines per finding that a person reads in seconds.

Rendered with rich; colour and styles only when writing to a terminal. When the output is
a file or a pipe, lines are not wrapped, so commands can be copied whole.
"""

from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.markup import escape

from diagnose.findings import BLOCKING, INFO, WARNING, Evidence, Finding, InputStats, Report
from diagnose.rules.base import fmt_time, plural

__all__ = ["input_line", "render_text"]

_STYLE = {BLOCKING: "bold red", WARNING: "bold yellow", INFO: "bold green"}
_REFS_SHOWN = 5
_PODS_SHOWN = 5


def input_line(stats: InputStats) -> str:
    files = plural(len(stats.files), "file")
    events = f", {stats.events} events" if stats.events else ""
    blank = getattr(stats, "blank", 0)
    blanks = f" + {blank} blank" if blank else ""
    return (
        f"{stats.lines} lines read = {stats.parsed} parsed + {stats.repaired} repaired + "
        f"{stats.unparsed} unparsed{blanks} ({files}{events})"
    )


def refs(items: list[Evidence], limit: int = _REFS_SHOWN) -> str:
    """``a.log:1, :3, :10 (error)`` grouped by file, first ``limit`` shown."""
    parts: list[str] = []
    previous = ""
    for ref in items[:limit]:
        where = f"{ref.file}:{ref.line}" if ref.file != previous else f":{ref.line}"
        previous = ref.file
        parts.append(where + (f" ({ref.role})" if ref.role else ""))
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(parts) + more


def _pods(finding: Finding) -> str:
    shown = finding.pods[:_PODS_SHOWN]
    others = finding.pod_count - len(shown)
    text = ", ".join(shown)
    if others > 0:
        text += f"{' and ' if text else ''}{others} other(s)"
    if finding.workloads:
        text += f"  ({', '.join(finding.workloads)})"
    return text


def _objects(finding: Finding) -> str:
    parts = []
    if finding.nodeclaims:
        shown = ", ".join(finding.nodeclaims[:3])
        more = f" and {len(finding.nodeclaims) - 3} more" if len(finding.nodeclaims) > 3 else ""
        parts.append(f"{'NodeClaim' if len(finding.nodeclaims) == 1 else 'NodeClaims'} {shown}{more}")
    if finding.nodepool:
        parts.append(f"NodePool {finding.nodepool}")
    if finding.instance_types:
        sizes = [
            f"{name} ({finding.instance_type_vcpus[name]} vCPUs)" if name in finding.instance_type_vcpus else name
            for name in finding.instance_types[:3]
        ]
        parts.append(", ".join(sizes) + (" …" if len(finding.instance_types) > 3 else ""))
    if finding.zones:
        parts.append("zone " + ", ".join(finding.zones))
    return " · ".join(parts)


def _quota(finding: Finding) -> str:
    quota = finding.quota
    if quota is None:
        return ""
    text = (
        f"quota {quota.name}: limit {quota.limit}, usage {quota.usage}, headroom {quota.headroom}, "
        f"required {quota.required} → new limit {quota.new_limit} "
        f"(from the log's error text, logged {fmt_time(quota.read_at)})"
    )
    if quota.live is not None:
        live = quota.live
        text += f"; read {fmt_time(live.read_at)}: limit {live.limit}, usage {live.usage}"
    return text


def _seen(finding: Finding) -> str:
    times = plural(finding.occurrences, "time")
    if finding.first_seen is None:
        return f"seen {times}"
    if finding.first_seen == finding.last_seen:
        return f"seen {times} at {fmt_time(finding.first_seen)}"
    return f"seen {times}, {fmt_time(finding.first_seen)} → {fmt_time(finding.last_seen)}"


def _finding(console: Console, index: int, finding: Finding) -> None:
    style = _STYLE.get(finding.severity, "bold")
    head = [finding.category]
    if finding.region:
        head.append(finding.region)
    head.append(_seen(finding))
    if finding.resolved:
        head.append("resolved")
    console.print(f"[{style}]{index}. {finding.severity.upper()}[/] [bold]{escape(' · '.join(head))}[/]")
    console.print(f"   {escape(finding.summary)}")
    quota = _quota(finding)
    if quota:
        console.print(f"   [dim]{escape(quota)}[/]")
    if finding.pod_count:
        console.print(f"   [dim]pods:[/] {escape(_pods(finding))}")
    objects = _objects(finding)
    if objects:
        console.print(f"   [dim]objects:[/] {escape(objects)}")
    if finding.resources:
        more = f" and {len(finding.resources) - 2} more" if len(finding.resources) > 2 else ""
        console.print(f"   [dim]resources:[/] {escape('; '.join(finding.resources[:2]) + more)}")
    for detail in finding.details[:4]:
        console.print(f"   [dim]{escape(detail)}[/]")
    for number, fix in enumerate(finding.fixes, 1):
        console.print(f"   [bold]fix {number}[/] [cyan]\\[{escape(fix.kind)}][/] {escape(fix.summary)}")
        for line in fix.command.splitlines():
            console.print(f"       [green]{escape(line)}[/]")
        if fix.check:
            console.print(f"       [dim]check:[/] {escape(fix.check)}")
    if finding.alternatives:
        shown = finding.alternatives[:3]
        text = ", ".join(f"{a.instance_type} ({a.vcpus} vCPUs, {plural(a.pods_per_node, 'pod')}/node)" for a in shown)
        hidden = len(finding.alternatives) - len(shown)
        console.print(f"   [dim]sizes that fit now:[/] {escape(text)}{f' and {hidden} more' if hidden > 0 else ''}")
    total = max(finding.evidence_total, len(finding.evidence))
    evidence = refs(finding.evidence)
    if total > len(finding.evidence):
        evidence += f" ({total} lines in all)"
    console.print(f"   [dim]evidence:[/] {escape(evidence)}")


def render_text(report: Report, stream: IO[str], color: bool = False, width: int | None = None) -> None:
    console = Console(
        file=stream,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        soft_wrap=not color,
        width=width,
        emoji=False,
    )
    stats = report.input
    console.print(f"[bold]karp-diagnose[/] {escape(input_line(stats))}")
    if stats.unparsed_refs:
        console.print(f"   [yellow]unparsed:[/] {escape(refs(stats.unparsed_refs))}")
    if stats.repaired_refs:
        console.print(f"   [dim]repaired:[/] {escape(refs(stats.repaired_refs))}")
    for note in report.notes:
        console.print(f"   [dim]{escape(note)}[/]")
    if report.filters:
        given = "; ".join(f"{k} {', '.join(v)}" for k, v in report.filters.items())
        hidden = f" ({report.hidden} findings hidden)" if report.hidden else ""
        console.print(f"   [dim]filters: {escape(given)}{hidden}[/]")
    counts = {s: sum(1 for f in report.findings if f.severity == s) for s in (BLOCKING, WARNING, INFO)}
    if not report.findings:
        console.print("\nNo findings: nothing in the input explains a Pending pod.")
        return
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    console.print(f"\n{plural(len(report.findings), 'finding')}: {summary}\n")
    for index, finding in enumerate(report.findings, 1):
        _finding(console, index, finding)
        console.print()
