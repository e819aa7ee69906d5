"""Start and end probabilities over the context tokens (pyqtgraph), with the chosen span shaded."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QWidget

from bertstudio.ui import plot_style
from bertstudio.ui.theme import Colors

MAX_LABELLED_TOKENS = 60  # a longer context opens zoomed to this many tokens around the answer
MAX_LABEL_CHARS = 12


def _short(token: str) -> str:
    return token if len(token) <= MAX_LABEL_CHARS else token[: MAX_LABEL_CHARS - 1] + "…"


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
        self._marked = 0  # first token of the shaded span
        item.getViewBox().sigXRangeChanged.connect(lambda *_args: self._update_ticks())
        plot_style.style_plot(self)
        plot_style.probability_axis(self, "left", "probability")
        self.setXRange(0.0, 1.0, padding=0)  # before a run: no -0.4..0.4 token positions
        self._update_ticks()
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
        self.region.setVisible(False)
        self._marked = 0
        plot_style.probability_axis(self, "left", "probability")
        self.setXRange(-0.5, max(len(self.tokens), 1) - 0.5, padding=0)
        self._update_ticks()

    def _update_ticks(self) -> None:
        """Label every k-th visible token, k such that labels never overprint (zoom in for all)."""
        axis = self.getPlotItem().getAxis("bottom")
        view = self.getPlotItem().getViewBox()
        if not self.tokens:
            axis.setTicks([[], []])
            return
        low, high = view.viewRange()[0]
        first, last = max(0, int(np.ceil(low))), min(len(self.tokens) - 1, int(np.floor(high)))
        if last < first:
            axis.setTicks([[], []])
            return
        shown = [_short(t) for t in self.tokens[first:last + 1]]
        metrics = QFontMetrics(axis.style.get("tickFont") or self.font())
        label_px = max(metrics.horizontalAdvance(t) for t in shown) + 12
        step = max(1, int(np.ceil(len(shown) * label_px / max(view.width(), 1.0))))
        phase = self._marked % step  # the answer's first token is always one of the labelled
        axis.setTicks([[(float(i), shown[i - first]) for i in range(first, last + 1) if i % step == phase],
                       [(float(i), "") for i in range(first, last + 1) if i % step != phase]])

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if getattr(self, "tokens", None) is not None:  # pyqtgraph resizes during __init__
            self._update_ticks()

    def mark(self, first: int, last: int) -> None:
        """Shade tokens first..last (inclusive) and bring them into view on a long context."""
        if first < 0 or last < first:
            self.region.setVisible(False)
            return
        self.region.setRegion((first - 0.5, last + 0.5))
        self.region.setVisible(True)
        self._marked = first
        self._update_ticks()
        if len(self.tokens) > MAX_LABELLED_TOKENS:
            centre = (first + last) / 2
            self.setXRange(centre - 30, centre + 30, padding=0)
