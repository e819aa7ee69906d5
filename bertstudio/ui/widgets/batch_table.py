"""The batch classification table: one row per input text, in input order, sortable by any column.

A "#" column holds each row's place in the input, so a sort can always be undone by clicking it;
each text cell remembers its row in the result, so the bars follow the chosen row whatever the order.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

INDEX_ROLE = Qt.ItemDataRole.UserRole + 1


class NumberItem(QTableWidgetItem):
    """A cell that sorts by its number, not its text."""

    def __init__(self, value: float, text: str) -> None:
        super().__init__(text)
        self.setData(Qt.ItemDataRole.UserRole, value)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        mine, theirs = self.data(Qt.ItemDataRole.UserRole), other.data(Qt.ItemDataRole.UserRole)
        if isinstance(mine, float | int) and isinstance(theirs, float | int):
            return mine < theirs
        return super().__lt__(other)


class BatchTable(QTableWidget):
    TEXT = 1  # the text column (column 0 is "#")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, 4, parent)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self._headers(["#", "text", "label", "score"])

    def _headers(self, headers: list[str]) -> None:
        self.setColumnCount(len(headers))
        self.setHorizontalHeaderLabels(headers)
        header = self.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(self.TEXT, QHeaderView.ResizeMode.Stretch)

    def show_outcome(self, outcome: Any) -> None:
        """A's rows (and B's label, score and whether the top-1 changed, when comparing), in input order."""
        comparing = outcome.second is not None
        self.setSortingEnabled(False)
        self.clearContents()
        self._headers(["#", "text", "label", "score"] + (["label B", "score B", "changed"] if comparing else []))
        self.setRowCount(len(outcome.result.rows))
        for index, row in enumerate(outcome.result.rows):
            text = QTableWidgetItem(row.text + (" ✂" if row.truncated else ""))
            text.setData(INDEX_ROLE, index)  # the row's place in the result
            text.setToolTip(row.text + ("\n(cut: longer than the model reads)" if row.truncated else ""))
            cells = [NumberItem(index + 1, str(index + 1)), text, QTableWidgetItem(row.top.label),
                     NumberItem(row.top.score, f"{row.top.score:.4f}")]
            if comparing:
                other, diff = outcome.second.rows[index], outcome.diff[index]
                cells += [QTableWidgetItem(other.top.label), NumberItem(other.top.score, f"{other.top.score:.4f}"),
                          QTableWidgetItem("top-1 changed" if diff.top_changed else "")]
            for column, cell in enumerate(cells):
                self.setItem(index, column, cell)
        self.horizontalHeader().setSortIndicator(0, Qt.SortOrder.AscendingOrder)  # input order
        self.setSortingEnabled(True)

    def result_index(self, table_row: int) -> int:
        item = self.item(table_row, self.TEXT)
        value = item.data(INDEX_ROLE) if item is not None else None
        return int(value) if value is not None else 0

    def visible_rows(self) -> int:
        return self.viewport().height() // max(1, self.verticalHeader().defaultSectionSize())
