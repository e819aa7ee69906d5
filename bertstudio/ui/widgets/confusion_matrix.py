"""Confusion matrix heatmap (rows = gold, columns = predicted), coloured by the row's rate on a
fixed 0-1 scale with the count written in each cell; clicking a cell asks for its rows."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QPointF, Signal
from PySide6.QtWidgets import QWidget

from bertstudio.ui.widgets.labelled_matrix import LabelledMatrix

MAX_WRITTEN = 400  # cells; beyond this the counts are in the tooltip only


class ConfusionMatrixView(LabelledMatrix):
    cell_clicked = Signal(str, str)  # gold label, predicted label

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__((0.0, 1.0), "CET-L12", "share of the gold row", MAX_WRITTEN, ("gold", "predicted"), parent)
        self.counts = np.zeros((0, 0), dtype=np.int64)
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        self.plot.scene().sigMouseMoved.connect(self._hovered)
        self.clear()  # 0-1 axes before the first evaluation

    def set_matrix(self, labels: Sequence[str], matrix: Sequence[Sequence[int]]) -> None:
        self.counts = np.asarray(matrix, dtype=np.int64).reshape(len(labels), len(labels))
        totals = self.counts.sum(axis=1, keepdims=True)
        rates = np.divide(self.counts, totals, out=np.zeros(self.counts.shape), where=totals > 0)
        self.show_cells(labels, rates, lambda row, column: (str(int(self.counts[row, column])),
                                                            bool(rates[row, column] > 0.55)))

    def clear(self) -> None:
        self.set_matrix((), [])

    def cell_at(self, scene_pos: QPointF) -> tuple[int, int] | None:
        if not self.labels:
            return None
        point = self.plot.getPlotItem().vb.mapSceneToView(scene_pos)
        row, column = int(np.floor(point.y())), int(np.floor(point.x()))
        if 0 <= row < len(self.labels) and 0 <= column < len(self.labels):
            return row, column
        return None

    def click_cell(self, row: int, column: int) -> None:
        """What a click on a cell does (also used by tests)."""
        self.cell_clicked.emit(self.labels[row], self.labels[column])

    def _clicked(self, event: object) -> None:
        cell = self.cell_at(event.scenePos())  # type: ignore[attr-defined]
        if cell is not None:
            self.click_cell(*cell)

    def _hovered(self, scene_pos: QPointF) -> None:
        cell = self.cell_at(scene_pos)
        if cell is None:
            self.plot.setToolTip("")
            return
        row, column = cell
        total = int(self.counts[row].sum())
        self.plot.setToolTip(f"gold {self.labels[row]}, predicted {self.labels[column]}: "
                             f"{int(self.counts[row, column])} of {total} row(s). Click to list them.")
