"""Start and end probabilities over the context tokens (pyqtgraph), with the chosen span shaded."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from bertstudio.ui import plot_style
from bertstudio.ui.theme import Colors

MAX_LABELLED_TOKENS = 60


class QAScoresPlot(pg.PlotWidget):
    """`set_scores(tokens, start, end)`; `mark(first, last)` shades tokens first..last.

    Probabilities on a fixed 0-1 axis (a flat 0.3 peak must not look like certainty);
    the legend sits in the title row, above the curves.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        item = self.getPlotItem()
        item.showGrid(x=False, y=False)
        item.setLabel("bottom", "context token")
        item.setMenuEnabled(False)
        item.setMouseEnabled(x=True, y=False)
        self.start_curve = item.plot([], [], name="start", symbol="o", symbolSize=4)
        self.end_curve = item.plot([], [], name="end", symbol="t", symbolSize=4)
        for curve in (self.start_curve, self.end_curve):
            curve.setClipToView(True)
            curve.setDownsampling(auto=True, method="peak")
        self.region = pg.LinearRegionItem(movable=False)
        self.region.setVisible(False)
        self.addItem(self.region)
        self.tokens: list[str] = []
        plot_style.style_plot(self)
        plot_style.probability_axis(self, "left", "probability")
        self.setMinimumHeight(160)

    def apply_theme(self, colors: Colors) -> None:  # plot_style calls this on a theme change
        for curve, colour in ((self.start_curve, colors.series_a), (self.end_curve, colors.series_b)):
            curve.setPen(pg.mkPen(colour, width=2))
            curve.setSymbolBrush(colour)
            curve.setSymbolPen(colour)
        self.region.setBrush(pg.mkBrush(*colors.highlight))
        plot_style.legend_outside(self, [("start", colors.series_a, "●"), ("end", colors.series_b, "▲")])

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
        plot_style.probability_axis(self, "left", "probability")
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
