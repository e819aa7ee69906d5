"""Confusion matrix heatmap (rows = gold, columns = predicted), coloured by the row's rate on a
fixed 0-1 scale with the count written in each cell; clicking a cell asks for its rows."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from bertstudio.ui import plot_style

MAX_WRITTEN = 400  # cells; beyond this the counts are in the tooltip only


class ConfusionMatrixView(QWidget):
    cell_clicked = Signal(str, str)  # gold label, predicted label

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.labels: tuple[str, ...] = ()
        self.counts = np.zeros((0, 0), dtype=np.int64)
        self.plot = pg.PlotWidget()
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        item = self.plot.getPlotItem()
        item.invertY(True)
        item.setLabel("left", "gold")
        item.setLabel("bottom", "predicted")
        item.setContentsMargins(0, 10, 4, 0)  # room above for the top row's edge and the colour bar's "1.0"
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.colour_bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get("CET-L12"), interactive=False,
                                          label="share of the gold row")
        self.colour_bar.setImageItem(self.image, insert_in=item)
        plot_style.style_plot(self.plot)  # theme colours (colour bar included), no SI prefix
        self.texts: list[pg.TextItem] = []
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        self.plot.scene().sigMouseMoved.connect(self._hovered)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        self.clear()  # 0-1 axes before the first evaluation

    def set_matrix(self, labels: Sequence[str], matrix: Sequence[Sequence[int]]) -> None:
        for text in self.texts:
            self.plot.removeItem(text)
        self.texts = []
        self.labels = tuple(labels)
        self.counts = np.asarray(matrix, dtype=np.int64).reshape(len(labels), len(labels))
        totals = self.counts.sum(axis=1, keepdims=True)
        rates = np.divide(self.counts, totals, out=np.zeros(self.counts.shape), where=totals > 0)
        self.image.setImage(rates.astype(np.float32), levels=(0.0, 1.0), autoLevels=False)
        ticks = [(i + 0.5, label if len(label) <= 14 else label[:13] + "…") for i, label in enumerate(self.labels)]
        item = self.plot.getPlotItem()
        item.getAxis("left").setTicks([ticks])
        item.getAxis("bottom").setTicks([ticks])
        if self.counts.size <= MAX_WRITTEN:
            for (row, column), count in np.ndenumerate(self.counts):
                colour = "w" if rates[row, column] > 0.55 else "k"
                text = pg.TextItem(str(int(count)), color=colour, anchor=(0.5, 0.5))
                text.setPos(column + 0.5, row + 0.5)
                self.plot.addItem(text)
                self.texts.append(text)
        size = max(1, len(self.labels))  # empty: 0-1, not pyqtgraph's ±0.4
        item.setRange(xRange=(0, size), yRange=(0, size), padding=0.02 if self.labels else 0)

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
