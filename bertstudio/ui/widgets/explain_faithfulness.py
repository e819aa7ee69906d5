"""Faithfulness of one or more explanations: AOPC and every bin, one row per explanation.

Comprehensiveness (C) is how much F drops when the explanation's top k% tokens are deleted:
higher is more faithful. Sufficiency (S) is how much F drops when only they are kept: lower is
more faithful. The best AOPC of each kind is in bold when several explanations are compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from bertstudio.core.explain.methods import FAITHFULNESS_BINS
from bertstudio.ui.widgets.layouts import column

CAPTION = ("<b>Faithfulness</b> (ERASER): C = F(x) − F(x without the top k% tokens), higher is more faithful; "
           "S = F(x) − F(only those tokens), lower is more faithful; AOPC = mean over k.")
EMPTY = "Tick Faithfulness and explain to see how much the top tokens carry the prediction."


class FaithfulnessTable(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.caption = QLabel(EMPTY)
        self.caption.setWordWrap(True)
        headers = ["method", "AOPC C ↑", "AOPC S ↓", *(f"C {k}%" for k in FAITHFULNESS_BINS),
                   *(f"S {k}%" for k in FAITHFULNESS_BINS)]
        self.table = QTableWidget(0, len(headers))
        self.table.setHorizontalHeaderLabels(headers)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 5)  # compact rows
        for index in range(len(headers)):  # the method's name takes the room left
            mode = QHeaderView.ResizeMode.ResizeToContents if index else QHeaderView.ResizeMode.Stretch
            self.table.horizontalHeader().setSectionResizeMode(index, mode)
        column(self.caption, self.table, owner=self)

    def height_for(self, rows: int) -> int:
        """The height that shows the caption, the header and `rows` rows without scrolling."""
        return (self.caption.sizeHint().height() + self.table.horizontalHeader().sizeHint().height()
                + rows * self.table.verticalHeader().defaultSectionSize() + 2 * self.table.frameWidth() + 8)

    def clear(self) -> None:
        self.table.setRowCount(0)
        self.caption.setText(EMPTY)

    def show_rows(self, rows: Sequence[tuple[str, Any]]) -> None:
        """(name, core.explain.faithfulness.Faithfulness or None) per explanation."""
        measured = [f for _, f in rows if f is not None]
        self.caption.setText(CAPTION if measured else EMPTY)
        self.table.setRowCount(len(rows))
        best_c = max((v for f in measured if (v := f.aopc_comprehensiveness) is not None), default=None)
        best_s = min((v for f in measured if (v := f.aopc_sufficiency) is not None), default=None)
        for r, (name, faithful) in enumerate(rows):
            cells: list[tuple[str, bool]] = [(name, False)]
            if faithful is None:
                cells += [("–", False)] * (self.table.columnCount() - 1)
            else:
                several = len(measured) > 1
                aopc_c, aopc_s = faithful.aopc_comprehensiveness, faithful.aopc_sufficiency
                cells += [(_number(aopc_c), several and aopc_c is not None and aopc_c == best_c),
                          (_number(aopc_s), several and aopc_s is not None and aopc_s == best_s)]
                cells += [(_number(v), False) for v in (*faithful.comprehensiveness, *faithful.sufficiency)]
            for c, (text, bold) in enumerate(cells):
                item = QTableWidgetItem(text)
                if c:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if bold:
                    font = QFont(item.font())
                    font.setBold(True)
                    item.setFont(font)
                if faithful is not None and c == 0:
                    item.setToolTip(f"{faithful.tokens} tokens counted; F(x) = {faithful.score:.4f}")
                self.table.setItem(r, c, item)


def _number(value: float | None) -> str:
    """A faithfulness value, or – where it is undefined (core.explain.faithfulness)."""
    return "–" if value is None else f"{value:+.3f}"
