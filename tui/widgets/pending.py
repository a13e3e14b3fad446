"""The pending-pods pane: groups by workload and root cause, then one row per pod."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from tui.state import ClusterState
from tui.views import POD_COLUMNS, POD_SORT, pending_changes, pending_groups, pending_rows
from tui.widgets.difftable import DiffTable

__all__ = ["PendingPane"]

GROUPS_SHOWN = 12  # the biggest groups are listed above the table; the rest are counted
_WIDTHS = (25, 5, 20, 23, 12, 40, 40, 30)


class PendingPane(Vertical):
    """Pending pods: who waits, why (scheduler and provisioner), and on which NodeClaim."""

    BORDER_TITLE = "Pending pods"

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.text = ""
        self._state: ClusterState | None = None
        self._now: datetime | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="pending-groups")
        yield Input(placeholder="filter pods (enter to apply, escape to close)", id="pending-filter")
        yield DiffTable(list(zip(POD_COLUMNS, _WIDTHS, strict=True)), id="pending-table", sort_by=POD_SORT)

    def show(self, state: ClusterState, now: datetime | None, changed: Iterable[str] | None = None) -> int:
        """Bring the pane to ``state``; with ``changed``, only those pods' rows are recomputed."""
        self._state, self._now = state, now
        groups = pending_groups(state)
        text = Text()
        if not groups:
            text.append("no pending pods", style="green")
        biggest = sorted(groups, key=lambda g: -g.total)[:GROUPS_SHOWN]
        for index, group in enumerate(sorted(biggest, key=lambda g: (g.workload, g.cause))):
            if index:
                text.append("\n")
            text.append(f"{group.total} × ")
            text.append(f"{group.workload}", style="bold")
            text.append(" · ")
            text.append(group.cause, style="bold red" if group.cause not in ("waiting", "launching") else "yellow")
            if group.counted:
                text.append(f" ({group.named} named + {group.counted} counted)", style="dim")
        if len(groups) > GROUPS_SHOWN:
            text.append(f"\n… and {len(groups) - GROUPS_SHOWN} smaller groups", style="dim")
        if self.text:
            text.append(f"\nfilter: {self.text!r}", style="dim")
        self.query_one("#pending-groups", Static).update(text)
        total = sum(g.total for g in groups)
        self.border_title = f"Pending pods ({total})"
        table = self.query_one("#pending-table", DiffTable)
        needle = self.text.lower()
        if changed is not None:
            changes = pending_changes(state, changed, now)
            if needle:
                changes = {k: r if r and any(needle in c.lower() for c in r) else None for k, r in changes.items()}
            return table.apply(changes)
        rows = pending_rows(state, now)
        if needle:
            rows = {k: r for k, r in rows.items() if any(needle in cell.lower() for cell in r)}
        return table.sync(rows)

    def open_filter(self) -> None:
        box = self.query_one("#pending-filter", Input)
        box.add_class("-open")
        box.value = self.text
        box.focus()

    @on(Input.Submitted, "#pending-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        self.text = event.value.strip()
        event.input.remove_class("-open")
        self.query_one("#pending-table", DiffTable).focus()
        if self._state is not None:
            self.show(self._state, self._now)
