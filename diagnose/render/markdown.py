"""The report as Markdown, to paste into an issue or a ticket."""

from __future__ import annotations

from diagnose.findings import Finding, Report
from diagnose.render.text import input_line, refs
from diagnose.rules.base import fmt_time, plural

__all__ = ["render_markdown"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _fence(text: str, language: str = "") -> list[str]:
    ticks = "````" if "```" in text else "```"
    return [f"{ticks}{language}", text, ticks]


def _rows(finding: Finding) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    if finding.pod_count:
        shown = ", ".join(f"`{p}`" for p in finding.pods[:10])
        others = finding.pod_count - min(len(finding.pods), 10)
        text = shown + (f" and {others} other(s)" if others > 0 else "")
        if finding.workloads:
            text += f" ({', '.join(finding.workloads)})"
        rows.append(("Pods", f"{finding.pod_count}: {text}"))
    if finding.nodeclaims:
        rows.append(("NodeClaims", ", ".join(f"`{c}`" for c in finding.nodeclaims[:10])))
    if finding.nodepool:
        rows.append(("NodePool", f"`{finding.nodepool}`"))
    if finding.instance_types:
        sizes = [
            f"`{n}` ({finding.instance_type_vcpus[n]} vCPUs)" if n in finding.instance_type_vcpus else f"`{n}`"
            for n in finding.instance_types[:10]
        ]
        rows.append(("Instance types", ", ".join(sizes)))
    if finding.resources:
        rows.append(("Resources", "; ".join(f"`{r}`" for r in finding.resources[:10])))
    if finding.region:
        rows.append(("Region", finding.region + (f" (zones {', '.join(finding.zones)})" if finding.zones else "")))
    quota = finding.quota
    if quota is not None:
        text = (
            f"`{quota.name}`: limit {quota.limit}, usage {quota.usage}, headroom {quota.headroom}, "
            f"required {quota.required}, new limit {quota.new_limit} (from the log's error text, logged "
            f"{fmt_time(quota.read_at)})"
        )
        if quota.live is not None:
            text += f"; read {fmt_time(quota.live.read_at)}: limit {quota.live.limit}, usage {quota.live.usage}"
        rows.append(("Quota", text))
    seen = plural(finding.occurrences, "time")
    if finding.first_seen is not None:
        seen += f", first {fmt_time(finding.first_seen)}, last {fmt_time(finding.last_seen)}"
    rows.append(("Seen", seen))
    if finding.resolved:
        rows.append(("Resolved", fmt_time(finding.resolved_at)))
    return rows


def _finding(index: int, finding: Finding) -> list[str]:
    lines = [f"## {index}. {finding.severity.upper()}: {finding.category}", "", finding.summary, ""]
    lines += ["| | |", "|---|---|"]
    lines += [f"| {name} | {_cell(value)} |" for name, value in _rows(finding)]
    lines.append("")
    for detail in finding.details:
        lines.append(f"- {detail}")
    if finding.details:
        lines.append("")
    if finding.fixes:
        lines += ["**Fixes**", ""]
        for number, fix in enumerate(finding.fixes, 1):
            lines.append(f"{number}. *{fix.kind}*: {fix.summary}")
            if fix.command:
                lines += ["", *("   " + line for line in _fence(fix.command, "sh")), ""]
            if fix.check:
                lines.append(f"   Check: `{fix.check}`")
        lines.append("")
    total = max(finding.evidence_total, len(finding.evidence))
    lines.append(f"**Evidence** ({total} lines): {refs(finding.evidence, 20)}")
    if finding.error_message:
        lines += ["", "<details><summary>Cloud error, verbatim</summary>", "", *_fence(finding.error_message), "", "</details>"]
    lines.append("")
    return lines


def render_markdown(report: Report) -> str:
    stats = report.input
    lines = ["# karp-diagnose report", "", f"- **Input:** {input_line(stats)}"]
    if stats.files:
        lines.append("- **Files:** " + ", ".join(f"`{f}`" for f in stats.files))
    if stats.unparsed_refs:
        lines.append(f"- **Unparsed lines:** {refs(stats.unparsed_refs, 20)}")
    if stats.repaired_refs:
        lines.append(f"- **Repaired lines:** {refs(stats.repaired_refs, 20)}")
    if report.filters:
        lines.append("- **Filters:** " + "; ".join(f"{k} {', '.join(v)}" for k, v in report.filters.items()))
    lines.append("")
    for note in report.notes:
        lines += [f"> {note}", ""]
    if not report.findings:
        lines += ["No findings: nothing in the input explains a Pending pod.", ""]
    for index, finding in enumerate(report.findings, 1):
        lines += _finding(index, finding)
    return "\n".join(lines).rstrip() + "\n"
