"""The findings pane: karp-diagnose's conclusions; the selected one shows evidence and fixes."""

from __future__ import annotations

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


def render_finding(finding: Finding, lines: dict[tuple[str, int], LogRecord]) -> Text:
    text = Text()
    text.append(f"{finding.severity.upper()} {finding.category}\n", style=_SEVERITY_STYLE.get(finding.severity, ""))
    text.append(finding.summary + "\n", style="bold")
    if finding.pod_count or finding.pods:
        text.append(f"pods: {finding.pod_count or len(finding.pods)}")
        if finding.pods:
            text.append(f" ({', '.join(finding.pods[:5])}{', …' if len(finding.pods) > 5 else ''})", style="dim")
        text.append("\n")
    if finding.nodeclaims:
        text.append(f"nodeclaims: {', '.join(finding.nodeclaims)}\n")
    if finding.instance_types:
        types = ", ".join(
            f"{t} ({finding.instance_type_vcpus[t]} vCPUs)" if t in finding.instance_type_vcpus else t
            for t in finding.instance_types
        )
        text.append(f"instance types: {types}\n")
    if (quota := finding.quota) is not None:
        text.append(
            f"quota {quota.name} ({quota.scope}): limit {quota.limit}, usage {quota.usage}, "
            f"required {quota.required}, new limit {quota.new_limit} [{quota.source}]\n",
            style="bold",
        )
    for detail in finding.details:
        text.append(f"{detail}\n", style="dim")
    if finding.fixes:
        text.append("fixes:\n", style="bold green")
        for fix in finding.fixes:
            text.append(f" • [{fix.kind}] {fix.summary}\n", style="green")
            if fix.command:
                text.append("   " + fix.command.replace("\n", "\n   ") + "\n", style="cyan")
    if finding.evidence:
        text.append("evidence:\n", style="bold")
        for ref in finding.evidence:
            record = lines.get((ref.file, ref.line))
            body = (record.message if record else "").replace("\n", " ")
            text.append(f" {ref.file}:{ref.line} ", style="magenta")
            text.append(body[:300] + "\n")
    return text


class FindingsPane(Vertical):
    """Findings, updated as lines and events arrive."""

    BORDER_TITLE = "Findings"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._findings: list[Finding] = []
        self._lines: dict[tuple[str, int], LogRecord] = {}

    def compose(self) -> ComposeResult:
        yield DiffTable([("Severity", 9), ("Category", 22), ("Summary", 80)], id="findings-table")
        with VerticalScroll(id="finding-detail-scroll"):
            yield Static(id="finding-detail")

    def show(self, state: ClusterState) -> None:
        self._findings = state.findings
        self._lines = {(r.file, r.line): r for r in state.log}
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
