"""A DataTable that is kept in step with a dict of rows by differences, never rebuilt.

``sync(rows)`` compares the new rows with the ones on screen: it adds the new keys,
removes the vanished ones and calls ``update_cell`` only for cells whose text changed.
Columns have fixed widths, so an update never re-measures the table; cells are plain
text (never markup). With ``sort_by``, rows stay ordered by those columns: the order is
recomputed only when a row was added or a cell of those columns changed, and only up to
``SORT_LIMIT`` rows (beyond that, new rows are appended in arrival order).

Textual's ``remove_row`` re-indexes every row (O(n) each) and ``sort`` re-reads every
cell, so removals are applied as one batch and the order is computed from our own plain
rows: both touch the table's row index once per update. These two methods use
DataTable internals (``_row_locations``, ``_data``, ``_update_count``) of Textual 8.2.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from rich.text import Text
from textual._two_way_dict import TwoWayDict
from textual.coordinate import Coordinate
from textual.widgets import DataTable
from textual.widgets._data_table import CellKey, RowKey

__all__ = ["SORT_LIMIT", "DiffTable"]

SORT_LIMIT = 5000  # above this many rows, new rows are appended (arrival order) instead of re-sorting


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
        self._sort_keys: dict[str, tuple[str, ...]] = {}  # row key -> its sort columns, then the key
        self._row_keys: dict[str, RowKey] = {}  # our key -> the table's RowKey object (hashing those is slow)
        self._column_keys: list[str] = []
        self._follow_end = False

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
        shown = self._shown
        gone = [k for k in shown if k not in rows]
        if gone:
            self._remove_rows(gone)
        return len(gone) + self._upsert(rows)

    def _upsert(self, rows: Mapping[str, tuple[str, ...]]) -> int:
        touched = 0
        shown = self._shown
        reorder = False
        sort_by = self._sort_by
        columns = self._column_keys
        for key, row in rows.items():
            previous = shown.get(key)
            if previous is None:
                self._row_keys[key] = self.add_row(*(_cell(c) for c in row), key=key)
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
            if sort_by:
                self._sort_keys[key] = (*(row[i] for i in sort_by), key)
        if reorder and sort_by and len(shown) <= SORT_LIMIT:
            self._order()
        return touched

    def apply(self, changes: Mapping[str, tuple[str, ...] | None]) -> int:
        """Bring only the given rows up to date (None: the row goes); the others stay as they are."""
        gone = [k for k, row in changes.items() if row is None and k in self._shown]
        if gone:
            self._remove_rows(gone)
        rows = {k: row for k, row in changes.items() if row is not None}
        return len(gone) + self._upsert(rows)

    def _remove_rows(self, keys: Collection[str]) -> None:
        """``remove_row`` for many rows at once: one pass over the row index instead of one per row."""
        doomed = {self._row_keys.pop(k) for k in keys}
        reverse: dict[int, RowKey] = self._row_locations._reverse
        kept = [key for _, key in sorted(reverse.items()) if key not in doomed]
        self._row_locations = TwoWayDict(dict(zip(kept, range(len(kept)), strict=True)))
        for key in doomed:
            for column_key in self._data.get(key, {}):
                self._updated_cells.discard(CellKey(key, column_key))
            self.rows.pop(key, None)
            self._data.pop(key, None)
            self._shown.pop(key.value or "", None)
            self._sort_keys.pop(key.value or "", None)
        self._require_update_dimensions = True
        self.check_idle()
        self._update_count += 1
        last = max(self.row_count - 1, 0)
        if self.cursor_coordinate.row > last:
            self.cursor_coordinate = Coordinate(last, self.cursor_coordinate.column)
        if self.hover_coordinate.row > last:
            self.hover_coordinate = Coordinate(last, self.hover_coordinate.column)
        self.refresh(layout=True)

    def _order(self) -> None:
        """Order rows by the ``sort_by`` columns, reading our plain rows rather than the cells."""
        ordered = sorted(self._sort_keys, key=self._sort_keys.__getitem__)
        row_keys = self._row_keys
        self._row_locations = TwoWayDict({row_keys[k]: index for index, k in enumerate(ordered)})
        self._update_count += 1
        self.refresh()

    def follow_end(self) -> None:
        """Put the cursor on the last row once the new rows are measured (on idle), so the table
        scrolls to it reliably: like ``tail -f``."""
        self._follow_end = True
        self.check_idle()

    def on_idle(self) -> None:
        # DataTable measures rows added since the last idle in its own idle handler, which runs first.
        if self._follow_end and not self._require_update_dimensions:
            self._follow_end = False
            if self.row_count:
                self.move_cursor(row=self.row_count - 1, animate=False)

    def selected_key(self) -> str | None:
        if not self.row_count:
            return None
        try:
            row_key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        except Exception:
            return None
        return row_key.value
