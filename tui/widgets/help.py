"""The help screen (``?``): every key, and what each pane shows."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["HelpScreen"]

HELP = """\
[b]karp-tui[/b]: pending pods, NodeClaims, quota and findings, replayed or live. Read-only.

[b]Panes[/b]  1 pending pods   2 NodeClaims and nodes   3 quota   4 findings   5 log
          tab / shift+tab move between tables; arrows and the mouse select rows
[b]Filter[/b] /  filter the pending pods or the log by text (enter applies, escape closes)
       l  log: cycle the minimum level     c  log: cycle the component
[b]Replay[/b] [ ]  step one record back / forward     { }  jump a tenth back / forward
       < >  first / last record   space  play / pause   + -  faster / slower
       click the bar in the status line to scrub
[b]Live[/b]   r  retry the connection now
[b]Other[/b]  ?  this help     q  quit

Pending pods are grouped by workload and root cause; pods that a log line only counted
("and 5 other(s)") appear as one "+N counted" row. Quota gauges show usage/limit, when
and where each figure was read, and the vCPUs waiting on it. Selecting a finding shows
its numbers, fixes and the evidence lines.
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
