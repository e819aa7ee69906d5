"""Ranked horizontal bars (best on top) with the value printed at each bar: pyqtgraph."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget


class RankedBars(pg.PlotWidget):
    """`set_items(labels, values)`: one bar per label, in the order given (first on top)."""

    def __init__(self, parent: QWidget | None = None, value_format: str = "{:.1%}", color: str = "#4a7bd0") -> None:
        super().__init__(parent, background="w")
        self.value_format = value_format
        self._color = color
        self.labels: list[str] = []
        self.values: np.ndarray = np.zeros(0)
        self._texts: list[pg.TextItem] = []
        self._bars = pg.BarGraphItem(x0=[], y=[], height=0.7, width=[], brush=color, pen=None)
        self.addItem(self._bars)
        item = self.getPlotItem()
        item.invertY(True)
        item.hideButtons()
        item.setMouseEnabled(False, False)
        item.setMenuEnabled(False)
        item.getAxis("bottom").setLabel("probability")
        item.showGrid(x=True, alpha=0.2)
        self.setMinimumHeight(120)

    def set_items(self, labels: Sequence[str], values: Sequence[float], tooltips: Sequence[str] = ()) -> None:
        self.labels = list(labels)
        self.values = np.asarray(values, dtype=float)
        count = len(self.labels)
        y = np.arange(count, dtype=float)
        self._bars.setOpts(x0=np.zeros(count), y=y, width=self.values, height=0.7, brush=self._color)
        for text in self._texts:
            self.removeItem(text)
        self._texts = []
        for row, value in enumerate(self.values):
            text = pg.TextItem(self.value_format.format(value), color="#222", anchor=(0, 0.5))
            text.setPos(float(value), float(row))
            self.addItem(text)
            self._texts.append(text)
        axis = self.getPlotItem().getAxis("left")
        axis.setTicks([[(float(i), label) for i, label in enumerate(self.labels)]])
        right = float(max(self.values.max(initial=0.0), 1e-9))
        self.setXRange(0, right * 1.15, padding=0)  # room for the value printed after the bar
        self.setYRange(-0.6, max(count, 1) - 0.4, padding=0)
        self.setToolTip("\n".join(tooltips))
        self.setMinimumHeight(40 + 24 * max(count, 1))
