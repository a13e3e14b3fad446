"""karp-tui driven with Textual's Pilot: every pane and every key, on the founding log."""

from __future__ import annotations

from typing import Any

from textual.widgets import Input, Static, Tabs
from textual.worker import WorkerCancelled

from tui.app import KarpTui
from tui.widgets.difftable import DiffTable
from tui.widgets.help import HelpScreen
from tui.widgets.logpane import LogPane
from tui.widgets.status import StatusBar


def _text(app: KarpTui, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


def _column(app: KarpTui, selector: str, index: int) -> list[str]:
    table = app.query_one(selector, DiffTable)
    return [row[index] for row in table.shown.values()]


async def _settle(app: KarpTui, pilot: Any) -> None:
    """Wait until every worker is done (superseded folds end cancelled: that is fine)."""
    for _ in range(20):
        try:
            await app.workers.wait_for_complete()
            break
        except WorkerCancelled:
            continue
    await pilot.pause()


async def test_replay_shows_founding_scenario(seed_app: KarpTui) -> None:
    async with seed_app.run_test(size=(80, 24)) as pilot:
        await _settle(seed_app, pilot)
        assert seed_app.position == 10
        groups = _text(seed_app, "#pending-groups")
        assert "10 × Deployment default/inflate · regional-vcpu-quota (5 named + 5 counted)" in groups
        pods = _column(seed_app, "#pending-table", 0)
        assert len(pods) == 6 and "… 5 other(s), counted" in pods
        row = seed_app.query_one("#claims-table", DiffTable).shown["general-purpose-pq7gl"]
        assert row[2:4] == ("Standard_D16ls_v5", "16")
        assert row[6] == "False OperationNotAllowed"
        assert "exceeding approved Total Regional Cores quota" in row[10]
        quota = _text(seed_app, "#quota-gauges")
        assert "14/20 vCPUs" in quota and "16 vCPUs needed for 10 pods" in quota


async def test_number_keys_and_tabs_switch_panes(seed_app: KarpTui) -> None:
    async with seed_app.run_test(size=(80, 24)) as pilot:
        await _settle(seed_app, pilot)
        for key, pane in (("2", "claims"), ("3", "quota"), ("4", "findings"), ("5", "log"), ("1", "pending")):
            await pilot.press(key)
            assert seed_app.active == pane
            assert seed_app.query_one(f"#{pane}").display
            assert seed_app.query_one("#tabs", Tabs).active == f"tab-{pane}"
            others = [p for p in ("pending", "claims", "quota", "findings", "log") if p != pane]
            assert not any(seed_app.query_one(f"#{p}").display for p in others)
        await pilot.click("#tab-quota")
        await pilot.pause()
        assert seed_app.active == "quota"


async def test_wide_terminal_shows_every_pane(seed_app: KarpTui) -> None:
    async with seed_app.run_test(size=(160, 48)) as pilot:
        await _settle(seed_app, pilot)
        assert seed_app.screen.has_class("-wide")
        assert not seed_app.query_one("#tabs").display
        assert all(seed_app.query_one(f"#{p}").display for p in ("pending", "claims", "quota", "findings", "log"))
        assert seed_app.active == "pending"
        await pilot.press("tab")  # focus moves to the next pane's table, which becomes the active pane
        assert seed_app.active == "claims" and seed_app.query_one("#claims").has_class("-active")
        await pilot.press("4")
        assert seed_app.query_one("#findings-table").has_focus
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not seed_app.screen.has_class("-wide")


async def test_timeline_step_jump_scrub_and_ends(seed_app: KarpTui) -> None:
    async with seed_app.run_test(size=(80, 24)) as pilot:
        await _settle(seed_app, pilot)
        await pilot.press("less_than_sign")
        await _settle(seed_app, pilot)
        assert seed_app.position == 0 and "no pending pods" in _text(seed_app, "#pending-groups")
        await pilot.press("right_square_bracket")
        await _settle(seed_app, pilot)
        assert seed_app.position == 1
        assert "5 named + 5 counted" in _text(seed_app, "#pending-groups")
        assert "waiting" in _text(seed_app, "#pending-groups")
        await pilot.press("right_curly_bracket", "right_curly_bracket")
        await _settle(seed_app, pilot)
        assert seed_app.position == 3
        assert set(_column(seed_app, "#pending-table", 2)) == {"launching"}
        await pilot.press("left_square_bracket", "left_curly_bracket")
        await _settle(seed_app, pilot)
        assert seed_app.position == 1
        assert "1/10" in _text(seed_app, "#status")
        await pilot.press("greater_than_sign")
        await _settle(seed_app, pilot)
        assert seed_app.position == 10
        status = seed_app.query_one(StatusBar)
        await pilot.click("#status", offset=(status._bar_start + 12, 0))
        await _settle(seed_app, pilot)
        assert seed_app.position == 5


async def test_play_and_speed(seed_app: KarpTui) -> None:
    async with seed_app.run_test(size=(80, 24)) as pilot:
        await _settle(seed_app, pilot)
        waits: list[float] = []
        seed_app.schedule = lambda delay, tick: waits.append(delay)
        await pilot.press("plus", "plus")
        assert seed_app.speed == 5.0
        await pilot.press("minus")
        assert seed_app.speed == 2.0
        await pilot.press("space")  # at the end: playing starts over
        await _settle(seed_app, pilot)
        assert seed_app.playing and seed_app.position == 0
        assert "playing" in _text(seed_app, "#status")
        assert waits == [0.02]  # before the first record: no log time to wait
        seed_app._tick()  # what the timer does: one record further
        await _settle(seed_app, pilot)
        assert seed_app.position == 1
        for _ in range(8):
            seed_app._tick()
        await _settle(seed_app, pilot)
        assert seed_app.position == 9
        assert abs(waits[-1] - 0.676 / 2.0) < 1e-6  # 15:17:53.943 -> 15:17:54.619 at x2
        seed_app._tick()
        seed_app._tick()  # past the end: playing stops
        await _settle(seed_app, pilot)
        assert seed_app.position == 10 and not seed_app.playing
        await pilot.press("space")
        await _settle(seed_app, pilot)
        assert seed_app.playing and seed_app.position == 0
        await pilot.press("space")
        assert not seed_app.playing
        seed_app._tick()  # a timer that fires after pausing does nothing
        await _settle(seed_app, pilot)
        assert seed_app.position == 0


async def test_log_filters_and_pretty_view(seed_app: KarpTui) -> None:
    async with seed_app.run_test(size=(80, 24)) as pilot:
        await _settle(seed_app, pilot)
        await pilot.press("5")
        log = seed_app.query_one(LogPane)
        assert len(seed_app.query_one("#log-table", DiffTable).shown) == 10
        await pilot.press("l", "l")
        assert log.min_level == "WARN"
        assert _column(seed_app, "#log-table", 1) == ["ERROR"]
        await pilot.press("l", "l")
        assert log.min_level == "DEBUG"
        await pilot.press("c")
        assert log.component == "nodeclaim.lifecycle"
        assert len(seed_app.query_one("#log-table", DiffTable).shown) == 7
        await pilot.press("c", "c")
        assert log.component == ""
        await pilot.press("slash")
        box = seed_app.query_one("#log-filter", Input)
        assert box.has_focus
        await pilot.press(*"virtual", "enter")
        await pilot.pause()
        assert len(seed_app.query_one("#log-table", DiffTable).shown) == 2
        await pilot.press("down")
        await pilot.pause()
        pretty = _text(seed_app, "#log-pretty")
        assert "seed-karpenter-2023-11-24.log:10" in pretty and "OperationNotAllowed" in pretty


async def test_pending_filter(seed_app: KarpTui) -> None:
    async with seed_app.run_test(size=(80, 24)) as pilot:
        await _settle(seed_app, pilot)
        await pilot.press("slash")
        assert seed_app.query_one("#pending-filter", Input).has_focus
        await pilot.press(*"79x4g", "enter")
        await pilot.pause()
        assert _column(seed_app, "#pending-table", 0) == ["inflate-74ccd665f4-79x4g"]
        await pilot.press("slash", "escape")
        await pilot.pause()
        assert not seed_app.query_one("#pending-filter", Input).display


async def test_claim_detail_follows_selection(seed_app: KarpTui) -> None:
    async with seed_app.run_test(size=(80, 24)) as pilot:
        await _settle(seed_app, pilot)
        await pilot.press("2")
        detail = _text(seed_app, "#claim-detail")
        assert "Standard_D16ls_v5 (16 vCPUs)" in detail
        assert "Launched=False OperationNotAllowed" in detail
        assert "requests cpu 10250m" in detail


async def test_findings_pane_lists_and_details(seed_app: KarpTui) -> None:
    async with seed_app.run_test(size=(80, 24)) as pilot:
        await _settle(seed_app, pilot)
        await pilot.press("4")
        table = seed_app.query_one("#findings-table", DiffTable)
        assert table.has_focus
        assert len(table.shown) == len(seed_app.state.findings)
        detail = _text(seed_app, "#finding-detail")
        if seed_app.state.findings:
            first = seed_app.state.findings[0]
            assert first.category in detail
        else:
            assert "no findings" in detail


async def test_help_opens_and_closes_then_q_quits(seed_app: KarpTui) -> None:
    async with seed_app.run_test(size=(80, 24)) as pilot:
        await _settle(seed_app, pilot)
        await pilot.press("question_mark")
        assert isinstance(seed_app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(seed_app.screen, HelpScreen)
        await pilot.press("q")
        await pilot.pause()
        assert seed_app._exit


async def test_unreadable_input_is_shown_not_fatal() -> None:
    def broken(progress: Any) -> Any:
        raise OSError("permission denied")

    app = KarpTui(load=broken)
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(app, pilot)
        assert "cannot read: permission denied" in _text(app, "#status")
        await pilot.press("right_square_bracket")
        assert app.position == 0


async def test_mouse_selects_a_log_line(seed_app: KarpTui) -> None:
    async with seed_app.run_test(size=(80, 24)) as pilot:
        await _settle(seed_app, pilot)
        await pilot.press("5")
        await _settle(seed_app, pilot)
        assert "seed-karpenter-2023-11-24.log:10" in _text(seed_app, "#log-pretty")  # follows the newest line
        table = seed_app.query_one("#log-table", DiffTable)
        first_visible = int(table.scroll_y)
        assert first_visible < 9
        await pilot.click("#log-table", offset=(5, 1))  # the first visible record, under the header
        await pilot.pause()
        assert table.cursor_coordinate.row == first_visible
        record = seed_app.state.log[first_visible]
        pretty = _text(seed_app, "#log-pretty")
        assert f"seed-karpenter-2023-11-24.log:{record.line} " in pretty and record.message[:40] in pretty
