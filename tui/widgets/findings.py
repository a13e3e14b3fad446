"""The findings pane: karp-diagnose's conclusions; the selected one shows evidence and fixes."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from diagnose.findings import BLOCKING, WARNING, Finding
from tui.state import ClusterState, LogRecord
from tui.widgets.difftable import DiffTable

__all__ = ["FindingsPane", "render_finding"]

_SEVERITY_STYLE = {BLOCKING: "bold red", WARNING: "yellow"}


def render_finding(finding: Finding, lines: Mapping[tuple[str, int], LogRecord]) -> Text:
    """Summary, numbers and fixes first (what to do), then the objects and the evidence lines."""
    text = Text()
    text.append(f"{finding.severity.upper()} {finding.category}", style=_SEVERITY_STYLE.get(finding.severity, ""))
    if finding.resolved:
        text.append("  resolved since", style="green")
        text.append(f" {finding.resolved_at:%H:%M:%S}" if finding.resolved_at else "", style="green")
    text.append("\n" + finding.summary + "\n", style="bold")
    if (quota := finding.quota) is not None:
        text.append(
            f"quota {quota.name} ({quota.scope}): limit {quota.limit}, usage {quota.usage}, "
            f"required {quota.required}, new limit {quota.new_limit} [{quota.source}]\n",
            style="bold",
        )
        if quota.live is not None:
            text.append(
                f"now: limit {quota.live.limit}, usage {quota.live.usage} (read {quota.live.read_at:%H:%M:%S})\n"
            )
    if finding.fixes:
        text.append("fixes:\n", style="bold green")
        for fix in finding.fixes:
            text.append(f" • [{fix.kind}] {fix.summary}\n", style="green")
            if fix.command:
                text.append("   " + fix.command.replace("\n", "\n   ") + "\n", style="cyan")
    for option in finding.alternatives[:3]:
        text.append(
            f" fits today: {option.nodes} x {option.instance_type} ({option.vcpus} vCPUs) "
            f"holds {option.pods} pods\n",
            style="green",
        )
    pods = finding.pod_count or len(finding.pods)
    if pods:
        shown = ", ".join(finding.pods[:5]) + (", …" if len(finding.pods) > 5 else "")
        text.append(f"pods: {pods}" + (f" ({shown})" if shown else "") + "\n")
    if finding.nodeclaims:
        text.append(f"nodeclaims: {', '.join(finding.nodeclaims)}\n")
    if finding.instance_types:
        types = ", ".join(
            f"{t} ({finding.instance_type_vcpus[t]} vCPUs)" if t in finding.instance_type_vcpus else t
            for t in finding.instance_types
        )
        text.append(f"instance types: {types}\n")
    for detail in finding.details:
        text.append(f"{detail}\n", style="dim")
    if finding.evidence:
        text.append("evidence:\n", style="bold")
        for ref in finding.evidence:
            record = lines.get((ref.file, ref.line))
            body = (ref.text or (record.message if record else "")).replace("\\n", " ").replace("\n", " ")
            text.append(f" {ref.file}:{ref.line}", style="magenta")
            text.append(f" {ref.role}" if ref.role else "", style="dim")
            text.append(f" {body[:300]}\n")
        if finding.evidence_total > len(finding.evidence):
            text.append(f" … {finding.evidence_total - len(finding.evidence)} more lines\n", style="dim")
    return text


class FindingsPane(Vertical):
    """Findings, updated as lines and events arrive."""

    BORDER_TITLE = "Findings"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._findings: list[Finding] = []
        self._lines: Mapping[tuple[str, int], LogRecord] = {}

    def compose(self) -> ComposeResult:
        yield DiffTable([("Severity", 9), ("Category", 22), ("Summary", 80)], id="findings-table")
        with VerticalScroll(id="finding-detail-scroll"):
            yield Static(id="finding-detail")

    def show(self, state: ClusterState) -> None:
        self._findings = state.findings
        self._lines = state.log_at
        rows = {
            str(i): (f.severity, f.category, f.summary.replace("\n", " ")) for i, f in enumerate(state.findings)
        }
        table = self.query_one("#findings-table", DiffTable)
        table.sync(rows)
        blocking = sum(1 for f in state.findings if f.severity == BLOCKING)
        self.border_title = f"Findings ({len(state.findings)}, {blocking} blocking)"
        self._detail(table.selected_key())

    @on(DataTable.RowHighlighted, "#findings-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail(event.row_key.value)

    def _detail(self, key: str | None) -> None:
        widget = self.query_one("#finding-detail", Static)
        index = int(key) if key is not None and key.isdigit() else -1
        if not 0 <= index < len(self._findings):
            widget.update(Text("no findings", style="dim"))
            return
        widget.update(render_finding(self._findings[index], self._lines))
