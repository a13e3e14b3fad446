"""DiffTable: rows kept in step by differences (adds, cell updates, batched removals, order)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tui.widgets.difftable import DiffTable


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield DiffTable([("Name", 10), ("Group", 8), ("Value", 6)], id="t", sort_by=(1, 0))


def _screen_rows(table: DiffTable) -> list[tuple[str, ...]]:
    return [tuple(str(cell) for cell in table.get_row_at(i)) for i in range(table.row_count)]


async def test_sync_adds_updates_removes_and_keeps_order() -> None:
    app = TableApp()
    async with app.run_test(size=(40, 20)) as pilot:
        table = app.query_one(DiffTable)
        rows = {f"k{i}": (f"pod-{i}", "b" if i % 2 else "a", str(i)) for i in range(6)}
        assert table.sync(rows) == 6
        await pilot.pause()
        assert [r[0] for r in _screen_rows(table)] == ["pod-0", "pod-2", "pod-4", "pod-1", "pod-3", "pod-5"]
        assert table.sync(rows) == 0  # nothing changed: nothing touched
        changed = dict(rows)
        changed["k2"] = ("pod-2", "a", "20")  # one cell
        assert table.sync(changed) == 1
        table.move_cursor(row=5)
        del changed["k0"], changed["k5"], changed["k3"]  # removed as one batch
        changed["k9"] = ("pod-9", "a", "9")
        assert table.sync(changed) == 4
        await pilot.pause()
        assert _screen_rows(table) == [
            ("pod-2", "a", "20"), ("pod-4", "a", "4"), ("pod-9", "a", "9"), ("pod-1", "b", "1"),
        ]
        assert table.cursor_coordinate.row == 2  # clamped to the 3 rows left before the new one came
        assert dict(table.shown) == changed


async def test_apply_touches_only_the_given_rows() -> None:
    app = TableApp()
    async with app.run_test(size=(40, 20)) as pilot:
        table = app.query_one(DiffTable)
        table.sync({"x": ("x", "a", "1"), "y": ("y", "a", "2"), "z": ("z", "b", "3")})
        assert table.apply({"y": None, "z": ("z", "a", "30"), "w": ("w", "c", "4")}) == 4
        await pilot.pause()
        assert _screen_rows(table) == [("x", "a", "1"), ("z", "a", "30"), ("w", "c", "4")]
        assert table.apply({"gone": None}) == 0
        assert table.selected_key() == "x"


async def test_cells_are_plain_text_not_markup() -> None:
    app = TableApp()
    async with app.run_test(size=(40, 20)) as pilot:
        table = app.query_one(DiffTable)
        table.sync({"r": ("[/subscriptions/x]", "[b]", "1")})
        await pilot.pause()
        assert _screen_rows(table) == [("[/subscriptions/x]", "[b]", "1")]
