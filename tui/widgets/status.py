"""The status line: replay position and speed (click to scrub), or the live connection's state."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import Static

__all__ = ["StatusBar"]


class StatusBar(Static):
    class Scrub(Message):
        def __init__(self, fraction: float) -> None:
            super().__init__()
            self.fraction = fraction

    _BAR = 24
    _bar_start = -1  # cell where the replay bar starts; -1 when there is none

    def show_replay(self, position: int, total: int, moment: datetime | None, playing: bool, speed: float) -> None:
        filled = round(self._BAR * position / total) if total else 0
        text = Text()
        text.append("▶ playing" if playing else "❚❚ paused", style="bold green" if playing else "bold")
        text.append(f" ×{speed:g} ")
        self._bar_start = text.cell_len
        text.append("━" * filled, style="green")
        text.append("─" * (self._BAR - filled), style="dim")
        text.append(f" {position}/{total} ")
        stamp = moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}" if moment else "start"
        text.append(stamp, style="bold")
        self.update(text)

    def show_live(self, label: str, message: str, ok: bool) -> None:
        self._bar_start = -1
        text = Text()
        text.append(label, style="bold")
        text.append("  ")
        text.append(message, style="green" if ok else "bold red")
        self.update(text)

    def on_click(self, event: events.Click) -> None:
        offset = event.x - self._bar_start
        if self._bar_start < 0:
            return
        if 0 <= offset <= self._BAR:
            self.post_message(self.Scrub(offset / self._BAR))
