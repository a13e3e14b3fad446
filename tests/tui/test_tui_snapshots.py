"""Layout of the founding scenario pinned as SVG snapshots (80x24 and 160x48).

Deterministic: replay ages are measured against the replay cursor's time, never the wall
clock. Accept a deliberate change with ``pytest tests/tui --snapshot-update``.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import DataTable
from textual.worker import WorkerCancelled

from tui.app import KarpTui


async def _loaded(pilot: Any) -> None:
    for _ in range(20):
        try:
            await pilot.app.workers.wait_for_complete()
            break
        except WorkerCancelled:
            continue
    # Tables measure new rows when idle, then scroll to their cursor after the next layout:
    # let both settle (bounded: each round only lets the app process its queue).
    for _ in range(50):
        await pilot.pause()
        if not any(t._require_update_dimensions or t._new_rows for t in pilot.app.query(DataTable)):
            break
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


@pytest.mark.parametrize("pane", ["1", "2", "3", "4", "5"])
def test_tui_founding_80x24(snap_compare: Any, seed_app: KarpTui, pane: str) -> None:
    async def before(pilot: Any) -> None:
        await _loaded(pilot)
        await pilot.press(pane)
        await _loaded(pilot)

    assert snap_compare(seed_app, terminal_size=(80, 24), run_before=before)


def test_tui_founding_160x48(snap_compare: Any, seed_app: KarpTui) -> None:
    assert snap_compare(seed_app, terminal_size=(160, 48), run_before=_loaded)
