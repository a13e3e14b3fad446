"""The karp-tui application: five panes over one ClusterState, fed by a replay or a live feed.

Threads: loading, folding records into the state and polling live sources happen in
``@work(thread=True)`` workers. A worker changes the state only while it holds
``_state_lock`` and hands the result to the screen with ``call_from_thread`` (which
waits for the screen to finish), so the screen never reads a half-applied update.
Panes are updated by differences (``DiffTable.sync``), never rebuilt.

Layout: below 140x40 cells one pane at a time under a tab bar (keys 1-5); from 140x40
up, all five in a grid.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from datetime import datetime
from typing import ClassVar

from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.geometry import Size
from textual.widgets import Footer, Input, Tab, Tabs
from textual.worker import get_current_worker

from provisioner.model.ports import Clock
from tui.sources.analysis import findings_for
from tui.sources.feed import Feed, FeedError
from tui.sources.replay import Timeline
from tui.state import ClusterState
from tui.widgets.claims import ClaimsPane
from tui.widgets.findings import FindingsPane
from tui.widgets.help import HelpScreen
from tui.widgets.logpane import LogPane
from tui.widgets.pending import PendingPane
from tui.widgets.quota import QuotaPane
from tui.widgets.status import StatusBar

__all__ = ["PANES", "KarpTui"]

PANES = (("pending", "1 Pending"), ("claims", "2 NodeClaims"), ("quota", "3 Quota"), ("findings", "4 Findings"), ("log", "5 Log"))
WIDE = (140, 40)
SPEEDS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0, 100.0)
RETRY_MAX = 30.0
AGE_REFRESH = 10.0  # seconds between full passes that refresh the pods' ages when live


class KarpTui(App[None]):
    CSS_PATH = "karp.tcss"
    TITLE = "karp-tui"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "quit"),
        Binding("question_mark", "help", "help"),
        Binding("slash", "filter", "filter"),
        *(Binding(str(i + 1), f"pane('{key}')", label.split()[1], show=False) for i, (key, label) in enumerate(PANES)),
        Binding("left_square_bracket", "step(-1)", "step", key_display="[ ]"),
        Binding("right_square_bracket", "step(1)", "step", show=False),
        Binding("left_curly_bracket", "jump(-1)", "jump", show=False),
        Binding("right_curly_bracket", "jump(1)", "jump", show=False),
        Binding("less_than_sign", "goto_start", "start", show=False),
        Binding("greater_than_sign", "goto_end", "end", show=False),
        Binding("space", "play", "play"),
        Binding("plus", "speed(1)", "faster", key_display="+ -"),
        Binding("minus", "speed(-1)", "slower", show=False),
        Binding("l", "level", "level", show=False),
        Binding("c", "component", "component", show=False),
        Binding("r", "retry", "retry", show=False),
        Binding("escape", "close_filter", "close filter", show=False),
    ]

    def __init__(
        self,
        *,
        load: Callable[[Callable[[int, int], None]], Timeline] | None = None,
        feed: Feed | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__()
        self._load = load
        self.feed = feed
        self.clock = clock
        self.state = ClusterState()
        self.timeline: Timeline | None = None
        self.position = 0
        self._wanted = -1  # the position last asked for; older folds give way to it
        self.playing = False
        self.speed = 1.0
        self.active = "pending"
        self.renders = 0
        self._ages_at: datetime | None = None  # "now" of the last full pass over the pending pods
        self._state_lock = threading.Lock()
        self._retry_now = threading.Event()
        # How playing waits for the next record; tests replace it to step time by hand.
        self.schedule: Callable[[float, Callable[[], None]], object] = lambda delay, tick: self.set_timer(delay, tick)

    # -- layout ---------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Tabs(*(Tab(label, id=f"tab-{key}") for key, label in PANES), id="tabs")
        with Container(id="panes"):
            yield PendingPane(id="pending", classes="pane -active")
            yield ClaimsPane(id="claims")
            yield QuotaPane(id="quota")
            yield FindingsPane(id="findings")
            yield LogPane(id="log")
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        for key, _ in PANES[1:]:
            self.query_one(f"#{key}").add_class("pane")
        self._layout()
        if self._load is not None:
            self.query_one(StatusBar).show_live("replay", "reading…", True)
            self._load_timeline()
        elif self.feed is not None:
            self.query_one(StatusBar).show_live(self.feed.label, "connecting…", True)
            self._follow(self.feed)
        self.query_one("#pending-table").focus()

    def on_resize(self, event: events.Resize) -> None:
        self._layout(event.size)

    def _layout(self, size: Size | None = None) -> None:
        size = size or self.size
        wide = size.width >= WIDE[0] and size.height >= WIDE[1]
        self.screen.set_class(wide, "-wide")

    @on(Tabs.TabActivated, "#tabs")
    def _tab(self, event: Tabs.TabActivated) -> None:
        if event.tab.id:
            self._activate(event.tab.id.removeprefix("tab-"), focus=False)

    def _activate(self, key: str, focus: bool = True) -> None:
        self.active = key
        for name, _ in PANES:
            self.query_one(f"#{name}").set_class(name == key, "-active")
        tabs = self.query_one("#tabs", Tabs)
        if tabs.active != f"tab-{key}":
            tabs.active = f"tab-{key}"
        if focus:
            pane = self.query_one(f"#{key}")
            target = next(iter(pane.query("DataTable")), None) or pane
            target.focus()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """The pane holding the focused widget is the active one (keys like / act on it)."""
        focused = self.focused
        for key, _ in PANES:
            if focused is not None and self.query_one(f"#{key}") in focused.ancestors_with_self:
                if self.active != key:
                    self.active = key
                    for name, _ in PANES:
                        self.query_one(f"#{name}").set_class(name == key, "-active")
                return

    # -- rendering ------------------------------------------------------------------------
    def now(self) -> datetime | None:
        """Ages are measured against this: the injected clock when live, else the state's time."""
        if self.clock is not None and self.timeline is None:
            return self.clock.now()
        return self.state.time

    def render_state(self) -> None:
        """Bring every pane to ``self.state`` (main thread; callers hold the state lock).

        Pending pods are updated by difference: only the pods that changed, unless something
        that many rows depend on changed, or ages are due for a refresh (every AGE_REFRESH)."""
        now = self.now()
        everything, changed = self.state.take_changes()
        ages_due = now is not None and (
            self._ages_at is None or abs((now - self._ages_at).total_seconds()) >= AGE_REFRESH
        )
        if self.timeline is not None or everything or ages_due or self._ages_at is None:
            self._ages_at = now
            self.query_one(PendingPane).show(self.state, now)
        else:
            self.query_one(PendingPane).show(self.state, now, changed)
        self.query_one(ClaimsPane).show(self.state, now)
        self.query_one(QuotaPane).show(self.state)
        self.query_one(FindingsPane).show(self.state)
        self.query_one(LogPane).show(self.state)
        self.renders += 1
        self._show_position()

    def _show_position(self) -> None:
        if self.timeline is not None:
            self.query_one(StatusBar).show_replay(
                self.position, len(self.timeline), self.timeline.time_at(self.position), self.playing, self.speed
            )

    def _on_screen(self, callback: Callable[..., object], *args: object) -> None:
        """Run ``callback`` on the screen's thread and wait for it; a no-op once the app is closing."""
        with contextlib.suppress(RuntimeError):
            self.call_from_thread(callback, *args)

    # -- replay -------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load_timeline(self) -> None:
        assert self._load is not None
        status = self.query_one(StatusBar)

        def progress(done: int, total: int) -> None:
            if total:
                self._on_screen(status.show_live, "replay", f"reading… {min(100 * done // total, 100)}%", True)

        try:
            timeline = self._load(progress)
        except Exception as error:  # shown, never fatal
            self._on_screen(self.query_one(StatusBar).show_live, "replay", f"cannot read: {error}", False)
            return
        self.timeline = timeline
        self._fold_to(len(timeline))

    def goto(self, position: int) -> None:
        if self.timeline is None:
            return
        self.position = self._wanted = self.timeline.clamp(position)
        self._show_position()
        self._fold(self.position)

    @work(thread=True, exclusive=True, group="fold", exit_on_error=False)
    def _fold(self, position: int) -> None:
        self._fold_to(position)

    def _fold_to(self, position: int) -> None:
        timeline = self.timeline
        if timeline is None:
            return
        with self._state_lock:
            if self._wanted not in (-1, position):
                return
            self.position = position
            self.state = timeline.state_at(position)
            self._on_screen(self.render_state)
        try:
            findings = findings_for(timeline.head(position))
        except Exception as error:  # the analysis failing must not stop the replay
            self._on_screen(self.query_one(StatusBar).show_live, "replay", f"analysis failed: {error}", False)
            return
        with self._state_lock:
            if self.position == position:
                self.state.set_findings(findings)  # may also fill in derived pod requests
                self._on_screen(self.render_state)

    def action_step(self, delta: int) -> None:
        self.goto(self.position + delta)

    def action_jump(self, direction: int) -> None:
        if self.timeline is not None:
            self.goto(self.position + direction * max(len(self.timeline) // 10, 1))

    def action_goto_start(self) -> None:
        self.goto(0)

    def action_goto_end(self) -> None:
        if self.timeline is not None:
            self.goto(len(self.timeline))

    def action_play(self) -> None:
        if self.timeline is None:
            return
        self.playing = not self.playing
        if self.playing and self.position >= len(self.timeline):
            self.goto(0)
        self._show_position()
        if self.playing:
            self._schedule_tick()

    def _schedule_tick(self) -> None:
        if self.timeline is None or not self.playing:
            return
        delay = min(max(self.timeline.delay_after(self.position) / self.speed, 0.02), 2.0)
        self.schedule(delay, self._tick)

    def _tick(self) -> None:
        if self.timeline is None or not self.playing:
            return
        if self.position >= len(self.timeline):
            self.playing = False
            self._show_position()
            return
        self.goto(self.position + 1)
        self._schedule_tick()

    def action_speed(self, direction: int) -> None:
        index = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - self.speed))
        self.speed = SPEEDS[max(0, min(index + direction, len(SPEEDS) - 1))]
        self._show_position()

    @on(StatusBar.Scrub)
    def _scrub(self, event: StatusBar.Scrub) -> None:
        if self.timeline is not None:
            self.goto(round(event.fraction * len(self.timeline)))

    # -- live ---------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="feed", exit_on_error=False)
    def _follow(self, feed: Feed) -> None:
        worker = get_current_worker()
        backoff = feed.interval
        status = self.query_one(StatusBar)
        while not worker.is_cancelled:
            try:
                update = feed.poll()
            except Exception as error:  # FeedError (connection) or anything else: shown, retried
                what = "connection lost" if isinstance(error, FeedError) else f"read failed ({type(error).__name__})"
                detail = str(error).splitlines()[0] if str(error) else type(error).__name__
                message = f"{what}, retrying in {backoff:g}s (r: now): {detail}"
                self._on_screen(status.show_live, feed.label, message, False)
                self._retry_now.wait(backoff)
                self._retry_now.clear()
                backoff = min(backoff * 2, RETRY_MAX)
                continue
            backoff = feed.interval
            with self._state_lock:
                self.state.apply_many(update.records)
                if update.snapshot is not None:
                    self.state.apply_snapshot(update.snapshot)
                if update.findings is not None:
                    self.state.set_findings(update.findings)
                self._on_screen(self.render_state)
            stamp = self.clock.now().strftime("%H:%M:%S") if self.clock else ""
            self._on_screen(status.show_live, feed.label, f"connected {update.note} {stamp}".strip(), True)
            self._retry_now.wait(feed.interval)
            self._retry_now.clear()
        feed.close()

    def action_retry(self) -> None:
        self._retry_now.set()

    # -- keys ---------------------------------------------------------------------------
    def action_pane(self, key: str) -> None:
        self._activate(key)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_filter(self) -> None:
        if self.active == "pending":
            self.query_one(PendingPane).open_filter()
            return
        if self.active != "log":
            self._activate("log")
        self.query_one(LogPane).open_filter()

    def action_close_filter(self) -> None:
        for box in self.query(Input).results(Input):
            box.remove_class("-open")
        self._activate(self.active)

    def action_level(self) -> None:
        self.query_one(LogPane).cycle_level()
        self._refresh_log()

    def action_component(self) -> None:
        self.query_one(LogPane).cycle_component()
        self._refresh_log()

    def _refresh_log(self) -> None:
        # Never wait for the lock here: a worker holding it may be waiting for this thread.
        # When it is busy, that worker's own render shows the new filter.
        if self._state_lock.acquire(blocking=False):
            try:
                self.query_one(LogPane).show(self.state)
            finally:
                self._state_lock.release()
