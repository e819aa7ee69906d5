"""Neuron view: softmax(q.k / sqrt(d)) V for one head and one query token, step by step.

Keys down the rows (one row per token, shared by every plot): the keys k, the query q above
the element-wise products q*k (each row of q*k sums to q.k), the scaled score q.k/sqrt(d),
the softmax that turns the scores into the attention row (a fixed 0-1 axis), and the values
v that the row weighs. The vectors are the model's own projections, captured by forward hooks
in the worker (core.tasks.attention.qk); here they are only sliced and drawn.

Keyboard: Up/Down step the query token, Left/Right (or [ and ]) the head. Hovering a key
highlights its row in every plot and names the dimensions whose products make its score.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QComboBox, QLabel, QWidget

from bertstudio.core.tasks.attention.bundle import AttentionBundle
from bertstudio.core.tasks.attention.qk import QueryBreakdown, query_breakdown
from bertstudio.core.tasks.attention.state import AttentionViewState
from bertstudio.ui import plot_style, theme
from bertstudio.ui.theme import Colors
from bertstudio.ui.widgets.attention_heatmap import DIVERGING, TokenAxis, colormap
from bertstudio.ui.widgets.attention_pages import StatePage, readout_label
from bertstudio.ui.widgets.layouts import bar_above, row

UNAVAILABLE = "Queries and keys were not captured for this result: run again to see the neuron view."


class NeuronPlots(pg.GraphicsLayoutWidget):
    """The plots of one breakdown, rows linked; `hovered(key)` (-1: none), `step(queries, heads)`."""

    hovered = Signal(int)
    step = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.images: dict[pg.PlotItem, pg.ImageItem] = {}
        self.tokens_axis = TokenAxis("left")
        self.keys = self._image_plot(1, 0, "keys k (dimensions →)", {"left": self.tokens_axis})
        self.query = self._image_plot(0, 1, "query q")
        self.products = self._image_plot(1, 1, "q * k (a row sums to q·k)")
        self.query.hideAxis("bottom")
        self.scores = self._bar_plot(1, 2, "q·k / √d")
        self.weights = self._bar_plot(1, 3, "softmax: the attention row")
        self.values = self._image_plot(1, 4, "values v (dimensions →)")
        self.query.setXLink(self.products)
        self.query.setMaximumHeight(60)
        for plot in (self.products, self.scores, self.weights, self.values):
            plot.setYLink(self.keys)
        for plot in (self.query, self.products, self.scores, self.weights, self.values):
            plot.getAxis("left").setStyle(showValues=False)  # the keys' plot names the rows for all
            plot.getAxis("left").setTicks([[], []])
            plot.getAxis("left").setWidth(4)  # q sits exactly above q * k (same left edge)
        self.weights.getAxis("bottom").setTicks([plot_style.PROBABILITY_TICKS])
        self.weights.getAxis("bottom").setStyle(hideOverlappingLabels=False)  # keep the 0 and the 1
        self.weights.setXRange(-0.03, 1.03, padding=0)  # a fixed 0-1 axis, room for its end labels
        self.weights.setMouseEnabled(x=False, y=True)
        self.product_bar = pg.ColorBarItem(values=(-1.0, 1.0), colorMap=colormap(DIVERGING), interactive=False,
                                           width=10, label="q * k")
        self.product_bar.setImageItem(self.images[self.products])
        self.addItem(self.product_bar, row=1, col=5)
        self.bars = {plot: pg.BarGraphItem(x0=[], y=[], height=0.75, width=[], pen=None)
                     for plot in (self.scores, self.weights)}
        for plot, bars in self.bars.items():
            plot.addItem(bars)
        # the hovered key (a band in every plot) and the query token (a dashed line)
        self.bands = [self._band(plot) for plot in (self.keys, self.products, self.scores, self.weights, self.values)]
        self.query_lines = [pg.InfiniteLine(angle=0, movable=False) for _ in range(5)]
        for plot, line in zip((self.keys, self.products, self.scores, self.weights, self.values), self.query_lines,
                              strict=True):
            plot.addItem(line, ignoreBounds=True)
        for column, stretch in ((0, 3), (1, 3), (2, 2), (3, 2), (4, 3)):
            self.ci.layout.setColumnStretchFactor(column, stretch)
        self.count = 0
        self.hovered_key = -1
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        plot_style.style_plot(self)

    def getPlotItem(self) -> pg.PlotItem:  # noqa: N802 - what plot_style expects of a plot widget
        return self.keys

    def _image_plot(self, row: int, col: int, title: str, axes: dict | None = None) -> pg.PlotItem:
        plot = self.addPlot(row=row, col=col, axisItems=axes or {})
        plot.setTitle(title, size="9pt")
        plot.invertY(True)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setMouseEnabled(x=False, y=True)
        # no axis captions: pyqtgraph's enableAutoSIPrefix(False) still picks a scale (x1000 on 0..15)
        # for an axis whose caption shows; the titles name the axes instead
        image = pg.ImageItem(axisOrder="row-major")
        image.setColorMap(colormap(DIVERGING))
        plot.addItem(image)
        self.images[plot] = image
        return plot

    def _bar_plot(self, row: int, col: int, title: str) -> pg.PlotItem:
        plot = self.addPlot(row=row, col=col)
        plot.setTitle(title, size="9pt")
        plot.invertY(True)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setMouseEnabled(x=False, y=True)
        plot.showGrid(x=True, alpha=0.2)
        return plot

    def _band(self, plot: pg.PlotItem) -> pg.LinearRegionItem:
        band = pg.LinearRegionItem(orientation="horizontal", movable=False, pen=pg.mkPen(None))
        band.setZValue(20)
        band.setVisible(False)
        plot.addItem(band, ignoreBounds=True)
        return band

    def apply_theme(self, colors: Colors) -> None:
        self.bars[self.scores].setOpts(brush=pg.mkBrush(colors.series_a))
        self.bars[self.weights].setOpts(brush=pg.mkBrush(colors.series_b))
        for line in self.query_lines:
            line.setPen(pg.mkPen(colors.foreground, width=1, style=Qt.PenStyle.DashLine))
        for band in self.bands:
            band.setBrush(pg.mkBrush(*colors.highlight[:3], 80))
        axis = self.product_bar.axis
        axis.setPen(pg.mkPen(colors.muted))
        axis.setTextPen(pg.mkPen(colors.foreground))

    def show_breakdown(self, parts: QueryBreakdown, tokens: list[str], query: int) -> None:
        length, dim = parts.keys.shape
        for plot, matrix in ((self.keys, parts.keys), (self.query, parts.query[None, :]),
                             (self.products, parts.products), (self.values, parts.values)):
            top = float(np.abs(matrix).max()) or 1.0
            image = self.images[plot]
            image.setImage(np.ascontiguousarray(matrix, dtype=np.float32), autoLevels=False, levels=(-top, top))
            image.setRect(QRectF(-0.5, -0.5, dim, matrix.shape[0]))
            plot.setLimits(xMin=-0.5, xMax=dim - 0.5)
            plot.setXRange(-0.5, dim - 0.5, padding=0)
        top = float(np.abs(parts.products).max()) or 1.0
        self.product_bar.setLevels((-top, top))
        self.query.setYRange(-0.5, 0.5, padding=0)
        self.query.setTitle(f"query q of {tokens[query][:16]!r}", size="9pt")
        rows = np.arange(length, dtype=float)
        scores = parts.scores.astype(float)
        self.bars[self.scores].setOpts(x0=np.minimum(scores, 0.0), y=rows, width=np.abs(scores), height=0.75)
        low, high = min(0.0, float(scores.min())), max(0.0, float(scores.max()))
        self.scores.setXRange(low, high if high > low else low + 1.0, padding=0.05)
        self.bars[self.weights].setOpts(x0=np.zeros(length), y=rows, width=parts.weights.astype(float), height=0.75)
        if length != self.count or self.tokens_axis.tokens != tokens:
            self.count = length
            self.tokens_axis.set_tokens(tokens)
            self.keys.setLimits(yMin=-0.5, yMax=length - 0.5)
            self.keys.setYRange(-0.5, min(length, 40) - 0.5, padding=0)
        for line in self.query_lines:
            line.setValue(query)
        self.highlight(self.hovered_key if self.hovered_key < length else -1)

    def highlight(self, key: int) -> None:
        self.hovered_key = key
        for band in self.bands:
            band.setVisible(key >= 0)
            if key >= 0:
                band.setRegion((key - 0.5, key + 0.5))

    def key_at(self, scene_pos: QPointF) -> int:
        for plot in (self.keys, self.products, self.scores, self.weights, self.values):
            if plot.vb.sceneBoundingRect().contains(scene_pos):
                row = int(round(plot.vb.mapSceneToView(scene_pos).y()))
                return row if 0 <= row < self.count else -1
        return -1

    def _mouse_moved(self, scene_pos: QPointF) -> None:
        key = self.key_at(scene_pos)
        if key != self.hovered_key:
            self.highlight(key)
            self.hovered.emit(key)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        moves = {Qt.Key.Key_Up: (-1, 0), Qt.Key.Key_Down: (1, 0), Qt.Key.Key_Left: (0, -1), Qt.Key.Key_Right: (0, 1)}
        move = moves.get(Qt.Key(event.key()))
        if move is None:
            super().keyPressEvent(event)
            return
        self.step.emit(*move)
        event.accept()


class NeuronPage(StatePage):
    """The chosen layer and head (the view state's), and a query token of this page's own."""

    FIELDS = frozenset({"layer", "head"})

    def __init__(self, state: AttentionViewState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.query_box = QComboBox()
        self.query_box.setToolTip("The query token (Up/Down in the plots step it; Left/Right the head)")
        self.query_box.currentIndexChanged.connect(lambda _i: self.refresh())
        self.readout = readout_label("Hover a key to see what makes its score; Up/Down: query token, "
                                     "Left/Right: head")
        self.plots = NeuronPlots()
        self.plots.hovered.connect(self._hovered)
        self.plots.step.connect(self._step)
        self.parts: QueryBreakdown | None = None
        self.tokens: list[str] = []
        self.message = QLabel(UNAVAILABLE)
        self.message.setVisible(False)
        theme.follow(self.message, lambda c: f"QLabel {{ color: {c.secondary}; }}")
        bar_above(self, row(QLabel("Query"), self.query_box, self.readout), self.message, self.plots)

    @property
    def query(self) -> int:
        return max(0, self.query_box.currentIndex())

    def set_query(self, index: int) -> None:
        if 0 <= index < self.query_box.count():
            self.query_box.setCurrentIndex(index)

    def set_bundle(self, bundle: AttentionBundle | None) -> None:
        tokens = list(bundle.result.tokens) if bundle is not None else []
        if tokens != self.tokens:  # a new input: token list, first word after [CLS] as the query
            self.tokens = tokens
            with QSignalBlocker(self.query_box):
                self.query_box.clear()
                self.query_box.addItems([f"{i}: {t}" for i, t in enumerate(tokens)])
                self.query_box.setCurrentIndex(1 if len(tokens) > 2 else 0)
        super().set_bundle(bundle)

    def draw(self, bundle: AttentionBundle) -> None:
        vectors = bundle.result.vectors
        self.message.setVisible(vectors is None)
        self.plots.setVisible(vectors is not None)
        if vectors is None:
            self.parts = None
            return
        s = self.state.settings
        self.parts = query_breakdown(vectors, s.layer, s.head, self.query)
        self.plots.show_breakdown(self.parts, self.tokens, self.query)
        self._hovered(self.plots.hovered_key)

    def describe_key(self, key: int) -> str:
        """What the readout says about one key: its score, its weight and the dimensions that make it."""
        parts, s = self.parts, self.state.settings
        if parts is None or not 0 <= key < len(self.tokens):
            return ""
        dims = ", ".join(f"dim {d} ({value:+.2f})" for d, value in parts.top_dimensions(key))
        return (f"L{s.layer} H{s.head}, query {self.tokens[self.query]!r} -> key {self.tokens[key]!r}: "
                f"q·k/√d = {parts.scores[key]:.3f}, weight {parts.weights[key]:.3f}; largest q*k: {dims}")

    def _hovered(self, key: int) -> None:
        s = self.state.settings
        text = self.describe_key(key)
        if not text and self.parts is not None:
            best = int(np.argmax(self.parts.weights))
            text = (f"L{s.layer} H{s.head}, query {self.tokens[self.query]!r}: strongest key "
                    f"{self.tokens[best]!r} ({self.parts.weights[best]:.3f}); hover a key, Up/Down: query token")
        self.readout.setText(text)
        self.plots.setToolTip(text if key >= 0 else "")

    def _step(self, queries: int, heads: int) -> None:
        if heads:
            self.state.move(0, heads)
        elif self.tokens:
            self.set_query((self.query + queries) % len(self.tokens))
