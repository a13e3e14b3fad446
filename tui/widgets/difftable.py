"""A DataTable that is kept in step with a dict of rows by differences, never rebuilt.

``sync(rows)`` compares the new rows with the ones on screen: it adds the new keys,
removes the vanished ones and calls ``update_cell`` only for cells whose text changed.
Columns have fixed widths, so an update never re-measures the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual.widgets import DataTable

__all__ = ["DiffTable"]


def _cell(value: str) -> Text:
    # Cells are plain text: log messages carry brackets that must not be read as markup.
    return Text(value, no_wrap=True, overflow="ellipsis")


class DiffTable(DataTable[Text]):
    def __init__(
        self, columns: Sequence[tuple[str, int]], *, id: str | None = None, sort_by: Sequence[int] = ()
    ) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._columns = list(columns)
        self._sort_by = tuple(sort_by)
        self._shown: dict[str, tuple[str, ...]] = {}
        self._column_keys: list[str] = []

    def on_mount(self) -> None:
        for index, (label, width) in enumerate(self._columns):
            key = f"c{index}"
            self.add_column(label, width=width, key=key)
            self._column_keys.append(key)

    @property
    def shown(self) -> Mapping[str, tuple[str, ...]]:
        return self._shown

    def sync(self, rows: Mapping[str, tuple[str, ...]]) -> int:
        """Bring the table to ``rows``; returns how many cells, rows added and rows removed it touched."""
        touched = 0
        reorder = False
        sort_by = self._sort_by
        shown = self._shown
        for key in [k for k in shown if k not in rows]:
            self.remove_row(key)
            del shown[key]
            touched += 1
        columns = self._column_keys
        for key, row in rows.items():
            previous = shown.get(key)
            if previous is None:
                self.add_row(*(_cell(c) for c in row), key=key)
                touched += 1
                reorder = True
            elif previous != row:
                for index, (column, old, new) in enumerate(zip(columns, previous, row, strict=True)):
                    if old != new:
                        self.update_cell(key, column, _cell(new))
                        touched += 1
                        reorder = reorder or index in sort_by
            else:
                continue
            shown[key] = row
        if reorder and sort_by:
            self.sort(*(columns[i] for i in sort_by), key=lambda *cells: tuple(str(c) for c in cells))
        return touched

    def selected_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            row_key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        except Exception:
            return None
        return row_key.value
