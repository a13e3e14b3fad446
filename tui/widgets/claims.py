"""The NodeClaims and nodes pane: what was asked for, how far it got, and the last cloud error."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from diagnose.sizing import describe_memory
from provisioner.model.quantity import format_cpu
from tui.state import CONDITIONS, ClusterState
from tui.views import CLAIM_COLUMNS, claim_rows, format_time
from tui.widgets.difftable import DiffTable

__all__ = ["ClaimsPane"]

_WIDTHS = (22, 16, 18, 5, 9, 10, 22, 10, 11, 5, 60)


class ClaimsPane(Vertical):
    """NodeClaims with NodePool, instance type, capacity, zone, conditions and errors."""

    BORDER_TITLE = "NodeClaims and nodes"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._state: ClusterState | None = None

    def compose(self) -> ComposeResult:
        yield DiffTable(list(zip(CLAIM_COLUMNS, _WIDTHS, strict=True)), id="claims-table")
        with VerticalScroll(id="claim-detail-scroll"):
            yield Static(id="claim-detail")

    def show(self, state: ClusterState, now: datetime | None) -> int:
        self._state = state
        table = self.query_one("#claims-table", DiffTable)
        touched = table.sync(claim_rows(state, now))
        self.border_title = f"NodeClaims and nodes ({len(state.claims)})"
        self._detail(table.selected_key())
        return touched

    @on(DataTable.RowHighlighted, "#claims-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail(event.row_key.value)

    def _detail(self, name: str | None) -> None:
        widget = self.query_one("#claim-detail", Static)
        claim = self._state.claims.get(name or "") if self._state else None
        if claim is None:
            widget.update(Text("no NodeClaims yet", style="dim"))
            return
        text = Text()
        text.append(claim.name, style="bold")
        vcpus = f" ({claim.vcpus} vCPUs)" if claim.vcpus is not None else ""
        text.append(f"  {claim.nodepool or '-'}  {claim.instance_type or '-'}{vcpus}")
        if claim.node:
            text.append(f"  node {claim.node}")
        if claim.requests_cpu_m is not None:
            memory = describe_memory(claim.requests_memory) if claim.requests_memory is not None else "-"
            text.append(f"\nrequests cpu {format_cpu(claim.requests_cpu_m)}, memory {memory}, pods {claim.requests_pods}")
        for kind in CONDITIONS:
            condition = claim.conditions[kind]
            style = {"True": "green", "False": "bold red"}.get(condition.status, "dim")
            text.append(f"\n{kind}=", style="bold")
            text.append(condition.status, style=style)
            if condition.reason:
                text.append(f" {condition.reason}")
            if condition.since:
                text.append(f" since {format_time(condition.since)}", style="dim")
        if claim.last_error:
            text.append("\nlast cloud error: ", style="bold red")
            if claim.last_error_code:
                text.append(f"{claim.last_error_code}: ", style="red")
            text.append(claim.last_error)
        widget.update(text)
