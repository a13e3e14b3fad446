"""The log pane: the record stream with level, component and text filters, and a pretty view."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Static

from tui.state import ClusterState, LogRecord
from tui.views import LEVELS, format_time, log_matches
from tui.widgets.difftable import DiffTable

__all__ = ["LogPane", "render_record"]

TAIL = 2000  # rows kept on screen: the newest matching records
_LEVEL_STYLE = {"ERROR": "bold red", "WARN": "yellow", "DEBUG": "dim"}


def _plain(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    return str(value)


def render_record(record: LogRecord) -> Text:
    text = Text()
    text.append(f"{record.file}:{record.line}  ", style="magenta")
    text.append(f"{record.time.isoformat() if record.time else '-'}  ")
    text.append(record.level, style=_LEVEL_STYLE.get(record.level, "bold"))
    text.append(f"  {record.component}\n", style="cyan")
    text.append(record.message + "\n", style="bold")
    fields = {k: _plain(v) for k, v in record.fields}
    if fields:
        text.append(json.dumps(fields, indent=2, ensure_ascii=False, default=str) + "\n")
    if record.raw:
        text.append("raw:\n", style="dim")
        text.append(record.raw.replace("\\n", "\n"), style="dim")
    return text


class LogPane(Vertical):
    """Every record; ``l`` cycles the minimum level, ``c`` the component, ``/`` filters text."""

    BORDER_TITLE = "Log"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.min_level = "DEBUG"
        self.component = ""
        self.text = ""
        self._state: ClusterState | None = None
        self._records: dict[str, LogRecord] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="log-filters")
        yield Input(placeholder="filter text (enter to apply, escape to close)", id="log-filter")
        yield DiffTable([("Time", 12), ("Level", 5), ("Component", 20), ("Message", 200)], id="log-table")
        with VerticalScroll(id="log-pretty-scroll"):
            yield Static(id="log-pretty")

    def show(self, state: ClusterState) -> None:
        self._state = state
        matching = []
        for record in reversed(state.log):  # newest first, stop at TAIL: cheap on long logs
            if log_matches(record, self.min_level, self.component, self.text):
                matching.append(record)
                if len(matching) == TAIL:
                    break
        matching.reverse()
        self._records = {str(r.index): r for r in matching}
        rows = {
            key: (
                format_time(r.time) + (f".{r.time.microsecond // 1000:03d}" if r.time else ""),
                r.level,
                r.component,
                r.message.split("\n", 1)[0],
            )
            for key, r in self._records.items()
        }
        table = self.query_one("#log-table", DiffTable)
        following = table.row_count == 0 or table.cursor_coordinate.row >= table.row_count - 1
        table.sync(rows)
        if following and table.row_count:  # on the newest record: stay on the newest, like tail -f
            table.move_cursor(row=table.row_count - 1, scroll=False)
            table.follow_end()
        component = self.component or "all"
        filters = Text()
        filters.append(f"level ≥ {self.min_level}", style="bold")
        filters.append(f"  component: {component}  ")
        filters.append(f"text: {self.text!r}" if self.text else "text: -", style="dim")
        shown = f"last {TAIL}" if len(matching) == TAIL else str(len(matching))
        filters.append(f"  {shown} of {len(state.log)} records", style="dim")
        self.query_one("#log-filters", Static).update(filters)
        self.border_title = f"Log ({len(state.log)})"
        self._pretty(table.selected_key())

    def cycle_level(self) -> None:
        self.min_level = LEVELS[(LEVELS.index(self.min_level) + 1) % len(LEVELS)]

    def cycle_component(self) -> None:
        components = sorted({r.component for r in (self._state.log if self._state else []) if r.component})
        options = ["", *components]
        current = options.index(self.component) if self.component in options else 0
        self.component = options[(current + 1) % len(options)]

    def open_filter(self) -> None:
        box = self.query_one("#log-filter", Input)
        box.add_class("-open")
        box.value = self.text
        box.focus()

    @on(Input.Submitted, "#log-filter")
    def _submitted(self, event: Input.Submitted) -> None:
        self.text = event.value.strip()
        event.input.remove_class("-open")
        self.query_one("#log-table", DiffTable).focus()
        if self._state is not None:
            self.show(self._state)

    @on(DataTable.RowHighlighted, "#log-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._pretty(event.row_key.value)

    def _pretty(self, key: str | None) -> None:
        record = self._records.get(key or "")
        widget = self.query_one("#log-pretty", Static)
        widget.update(render_record(record) if record else Text("no record selected", style="dim"))
