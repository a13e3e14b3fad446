"""The help screen (``?``): every key, and what each pane shows."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["HelpScreen"]

HELP = """\
[b]karp-tui[/b]: why pods are Pending, replayed or live. Read-only.

[b]Panes[/b]
  1 pending pods   2 NodeClaims   3 quota   4 findings   5 log
  tab, shift+tab   move between tables
  arrows, mouse    select a row (details show below the table)

[b]Filters[/b]
  /   filter the pending pods or the log by text
      (enter applies, escape closes)
  l   log: cycle the minimum level
  c   log: cycle the component

[b]Replay[/b]
  [ ]   one record back / forward
  { }   a tenth of the records back / forward
  < >   first / last record
  space play / pause      + -  faster / slower
  click the bar in the status line to scrub

[b]Live[/b]
  r   retry the connection now

[b]Other[/b]
  ?   this help (escape closes)     q   quit

Pending pods are grouped by workload and root cause; pods a log
line only counted ("and 5 other(s)") show as one "counted" row.
Quota gauges show usage/limit, when and where each figure was
read, and the vCPUs waiting on it. Selecting a finding shows its
numbers, fixes and evidence lines.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "close"),
        Binding("question_mark", "dismiss", "close"),
        Binding("q", "dismiss", "close"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(HELP)
