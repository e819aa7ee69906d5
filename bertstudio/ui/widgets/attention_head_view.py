"""Head view (as in BertViz): queries on the left, keys on the right, a line per strong weight.

Usable at 512 tokens: the token labels are the plot's left and right axes, which draw only
the labels in view and thin them (every k-th token) so they never overprint; the wheel zooms,
dragging or the scroll bar scrolls; hovering a token shows only its lines, a click keeps that
focus. Lines are grouped into a few opacity bins per head, each bin one PlotCurveItem drawn
as plain line segments. Only lines with an end in view are drawn, at most LINE_BUDGET (the
strongest), re-chosen when the view scrolls or zooms: a paint stays cheap at 512 tokens.
"""

from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QTimer, Signal
from PySide6.QtGui import QColor, QFontMetrics
from PySide6.QtWidgets import QApplication

from bertstudio.core.tasks.attention.bundle import LINE_BINS, LINE_BUDGET, Lines, binned, lines_in_view
from bertstudio.ui import plot_style, theme
from bertstudio.ui.widgets.attention_heatmap import TokenAxis

HEAD_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
                "#7f7f7f", "#bcbd22", "#393b79", "#637939")
VISIBLE_TOKENS = 40  # tokens in view at first; the rest by scrolling or zooming out


def head_colour(head: int) -> str:
    return HEAD_COLOURS[head % len(HEAD_COLOURS)]


class HeadView(pg.GraphicsLayoutWidget):
    hovered = Signal(str)
    focus_changed = Signal(object)  # (side, index into the shown tokens) or None: a click on a token
    range_changed = Signal(float, float)  # first and last token row in view

    def __init__(self, parent=None) -> None:  # noqa: ANN001
        super().__init__(parent)
        label_px = QFontMetrics(QApplication.font()).height()  # taller than the axis text (its own font is smaller)
        self.left_axis, self.right_axis = TokenAxis("left"), TokenAxis("right")
        for axis in (self.left_axis, self.right_axis):
            axis.LABEL_PX = label_px  # one label per text height at most: labels never overprint
        self.plot = self.addPlot(axisItems={"left": self.left_axis, "right": self.right_axis})
        self.plot.showAxis("right")
        self.plot.hideAxis("bottom")
        self.plot.invertY(True)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=True)
        self.tokens: list[str] = []
        self.keys: list[str] = []
        self.matrices: list[tuple[int, np.ndarray]] = []  # (head, rows x cols)
        self._curves: list[pg.PlotCurveItem] = []
        self._lines: list[Lines] = []
        self._pending: list[tuple[int, np.ndarray]] = []
        self._build = QTimer(self)
        self._build.setSingleShot(True)
        self._build.setInterval(0)
        self._build.timeout.connect(self._build_some)
        self.drawn = (0, 0)  # lines drawn, lines with an end in view (before the budget cut)
        self._refresh = QTimer(self)
        self._refresh.setSingleShot(True)
        self._refresh.setInterval(15)
        self._refresh.timeout.connect(self._draw_lines)
        self._highlight = pg.PlotCurveItem(connect="pairs", segmentedLineMode="on")
        self._highlight.setZValue(5)
        self.plot.addItem(self._highlight)
        self._focus: tuple[int, int] | None = None  # (side, token): 0 = query, 1 = key
        self.pinned: tuple[int, int] | None = None  # focus kept by a click
        self.plot.vb.sigYRangeChanged.connect(self._range_moved)
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self.scene().sigMouseClicked.connect(self._mouse_clicked)
        plot_style.style_plot(self)  # the theme's background and token axes, again when the theme changes

    def getPlotItem(self) -> pg.PlotItem:  # noqa: N802 - what plot_style expects of a plot widget
        return self.plot

    def set_heads(self, queries: list[str], keys: list[str], matrices: list[tuple[int, np.ndarray]]) -> None:
        """Draw the given heads' matrices: query tokens on the left, key tokens on the right."""
        same_tokens = (queries, keys) == (self.tokens, self.keys)
        self.tokens, self.keys, self.matrices = list(queries), list(keys), matrices
        self._focus = None
        self._lines = []
        self._pending = list(matrices)  # their lines are found a few heads per event-loop turn
        needed = len(matrices) * (len(LINE_BINS) - 1)
        while len(self._curves) < needed:  # curves are kept and reused: creating them is the slow part
            curve = pg.PlotCurveItem(connect="pairs", skipFiniteCheck=True, segmentedLineMode="on")
            self.plot.addItem(curve)
            self._curves.append(curve)
        index = 0
        for head, _matrix in matrices:
            colour = QColor(head_colour(head))
            for high in LINE_BINS[1:]:
                colour.setAlphaF(min(1.0, 0.15 + high * 0.85))
                self._curves[index].setPen(pg.mkPen(QColor(colour), width=1))
                self._curves[index].setOpacity(1.0)
                index += 1
        for curve in self._curves[needed:]:
            curve.setData([], [])
        self._highlight.setData([], [])
        if same_tokens and self.tokens:  # another head or layer: keep where the person scrolled to
            self._build_some()
            if self.pinned is not None:
                self.focus(*self.pinned)
            return
        self.pinned = None
        self.left_axis.set_tokens(self.tokens)
        self.right_axis.set_tokens(self.keys)
        count = max(len(self.tokens), len(self.keys))
        self.plot.setLimits(yMin=-0.5, yMax=max(count, 1) - 0.5, xMin=0.0, xMax=1.0,
                            minYRange=min(5, max(count, 1)))
        self.plot.setRange(xRange=(0.0, 1.0), yRange=(-0.5, min(count, VISIBLE_TOKENS) - 0.5), padding=0)
        self._build_some()

    @property
    def complete(self) -> bool:
        """Every chosen head's lines are found (False while the incremental build runs)."""
        return not self._pending

    def _build_some(self, budget_s: float = 0.02) -> None:
        """Find the lines of the next heads for ~20 ms, draw what is found, come back for the rest:
        12 heads at 512 tokens never hold the GUI thread for one long stretch."""
        start = time.perf_counter()
        while self._pending and (not self._lines or time.perf_counter() - start < budget_s):
            head, matrix = self._pending.pop(0)
            self._lines.append(Lines.of(head, matrix))
        self._draw_lines()
        if self._pending:
            self._build.start()

    def _range_moved(self, _vb: object, rows: tuple[float, float]) -> None:
        self.range_changed.emit(float(rows[0]), float(rows[1]))
        self._refresh.start()  # scrolling fires many events: choose the lines once it pauses

    def _draw_lines(self) -> None:
        """The lines with an end in view, the strongest LINE_BUDGET of them, into the bin curves."""
        self._refresh.stop()
        low, high = self.visible_rows()
        chosen, total = lines_in_view(self._lines, low - 1, high + 1, LINE_BUDGET)
        curves = iter(self._curves)
        for lines in chosen:
            for _high, xs, ys in binned(lines):
                next(curves).setData(xs, ys, connect="pairs")
        for curve in curves:  # heads whose lines are not found yet
            curve.setData([], [])
        self.drawn = (sum(len(lines.w) for lines in chosen), total)

    @property
    def count(self) -> int:
        return max(len(self.tokens), len(self.keys))

    def visible_rows(self) -> tuple[float, float]:
        low, high = self.plot.vb.viewRange()[1]
        return float(low), float(high)

    def scroll_to(self, first: float) -> None:
        """Show the rows from `first` on, keeping the zoom."""
        low, high = self.visible_rows()
        span = high - low
        first = min(max(first, -0.5), max(self.count - 0.5 - span, -0.5))
        self.plot.setYRange(first, first + span, padding=0)

    def zoom(self, rows: float) -> None:
        """Show about `rows` tokens around the middle of the view (the wheel does the same)."""
        low, high = self.visible_rows()
        middle, half = (low + high) / 2, max(2.5, min(rows, self.count)) / 2
        self.plot.setYRange(middle - half, middle + half, padding=0)

    def focus(self, side: int | None, token: int | None) -> None:
        """Highlight one token's lines (side 0: as query, 1: as key); None shows all again."""
        if side is None or token is None or not self.matrices:
            self._focus = None
            self._highlight.setData([], [])
            for curve in self._curves:
                curve.setOpacity(1.0)
            return
        self._focus = (side, token)
        xs: list[float] = []
        ys: list[float] = []
        texts = []
        for head, matrix in self.matrices:
            weights = matrix[token] if side == 0 else matrix[:, token]
            others = np.nonzero(weights >= LINE_BINS[0])[0].astype(float)
            xs += [0.0, 1.0] * len(others)
            pairs = np.column_stack([np.full_like(others, token), others]) if side == 0 else \
                np.column_stack([others, np.full_like(others, token)])
            ys += pairs.ravel().tolist()
            best = int(np.argmax(weights))
            other_tokens = self.keys if side == 0 else self.tokens
            texts.append(f"head {head}: strongest {other_tokens[best]} ({weights[best]:.3f})")
        pen = pg.mkPen(theme.colors().foreground, width=2)  # black on light, light on dark
        self._highlight.setData(np.array(xs), np.array(ys), connect="pairs", pen=pen)
        for curve in self._curves:
            curve.setOpacity(0.12)
        role = "query" if side == 0 else "key"
        own = self.tokens if side == 0 else self.keys
        self.hovered.emit(f"{own[token]} as {role}: " + "; ".join(texts))

    def pin(self, focus: tuple[int, int] | None) -> None:
        """Keep one token's lines shown (None: follow the mouse again); scrolls it into view."""
        self.pinned = focus
        if focus is None:
            self.focus(None, None)
            return
        self.focus(*focus)
        low, high = self.visible_rows()
        if not low <= focus[1] <= high:
            self.scroll_to(focus[1] - (high - low) / 2)

    def _token_at(self, scene_pos: QPointF) -> tuple[int, int] | None:
        if not self.tokens or not self.plot.sceneBoundingRect().contains(scene_pos):
            return None
        point = self.plot.vb.mapSceneToView(scene_pos)
        token = int(round(point.y()))
        side = 0 if point.x() < 0.0 else 1 if point.x() > 1.0 else None
        if side is None or not 0 <= token < len(self.tokens if side == 0 else self.keys):
            return None
        return side, token

    def _mouse_moved(self, scene_pos: QPointF) -> None:
        if self.pinned is not None:
            return
        found = self._token_at(scene_pos)
        if found is None:
            if self._focus is not None:
                self.focus(None, None)
        elif self._focus != found:
            self.focus(*found)

    def _mouse_clicked(self, event) -> None:  # noqa: ANN001
        found = self._token_at(event.scenePos())
        if found is not None or self.pinned is not None:
            self.focus_changed.emit(None if found == self.pinned else found)
