"""Start and end probabilities over the context tokens (pyqtgraph), with the chosen span shaded."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

MAX_LABELLED_TOKENS = 60


class QAScoresPlot(pg.PlotWidget):
    """`set_scores(tokens, start, end)`; `mark(first, last)` shades tokens first..last."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, background="w")
        item = self.getPlotItem()
        item.addLegend(offset=(-10, 10), colCount=2)
        item.showGrid(x=False, y=True, alpha=0.2)
        item.setLabel("left", "probability")
        item.setLabel("bottom", "context token")
        item.setMenuEnabled(False)
        item.setMouseEnabled(x=True, y=False)
        self.start_curve = item.plot([], [], pen=pg.mkPen("#1a56b0", width=2), name="start",
                                     symbol="o", symbolSize=4, symbolBrush="#1a56b0")
        self.end_curve = item.plot([], [], pen=pg.mkPen("#c0392b", width=2), name="end",
                                   symbol="t", symbolSize=4, symbolBrush="#c0392b")
        for curve in (self.start_curve, self.end_curve):
            curve.setClipToView(True)
            curve.setDownsampling(auto=True, method="peak")
        self.region = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(255, 213, 79, 90))
        self.region.setVisible(False)
        self.addItem(self.region)
        self.tokens: list[str] = []
        self.setMinimumHeight(160)

    def set_scores(self, tokens: Sequence[str], start: np.ndarray, end: np.ndarray) -> None:
        self.tokens = list(tokens)
        x = np.arange(len(self.tokens), dtype=float)
        self.start_curve.setData(x, np.asarray(start, dtype=float))
        self.end_curve.setData(x, np.asarray(end, dtype=float))
        axis = self.getPlotItem().getAxis("bottom")
        if len(self.tokens) <= MAX_LABELLED_TOKENS:
            axis.setTicks([[(float(i), t) for i, t in enumerate(self.tokens)]])
        else:
            axis.setTicks(None)
        self.region.setVisible(False)
        self.setYRange(0, 1.05 * max(float(np.max(start, initial=0)), float(np.max(end, initial=0)), 1e-6))
        self.setXRange(-0.5, max(len(self.tokens), 1) - 0.5, padding=0)

    def mark(self, first: int, last: int) -> None:
        """Shade tokens first..last (inclusive) and bring them into view on a long context."""
        if first < 0 or last < first:
            self.region.setVisible(False)
            return
        self.region.setRegion((first - 0.5, last + 0.5))
        self.region.setVisible(True)
        if len(self.tokens) > MAX_LABELLED_TOKENS:
            centre = (first + last) / 2
            self.setXRange(centre - 30, centre + 30, padding=0)
