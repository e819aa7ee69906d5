"""Head view (as in BertViz): queries on the left, keys on the right, a line per strong weight.

Lines are grouped into a few opacity bins per head, each bin one PlotCurveItem with
connect='pairs', so thousands of lines are a handful of items. Hovering a token shows only
its lines, at full strength.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Signal
from PySide6.QtGui import QColor

HEAD_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
                "#7f7f7f", "#bcbd22", "#393b79", "#637939")
BINS = (0.02, 0.05, 0.1, 0.2, 0.4, 1.01)  # weight bin edges; weaker lines are not drawn
VISIBLE_TOKENS = 40  # tokens in view at once; the rest by scrolling


class HeadView(pg.GraphicsLayoutWidget):
    hovered = Signal(str)

    def __init__(self, parent=None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.setBackground("w")
        self.plot = self.addPlot()
        self.plot.invertY(True)
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=True)
        self.tokens: list[str] = []
        self.keys: list[str] = []
        self.matrices: list[tuple[int, np.ndarray]] = []  # (head, T x T)
        self._curves: list[pg.PlotCurveItem] = []
        self._labels: list[pg.TextItem] = []
        self._highlight = pg.PlotCurveItem(connect="pairs")
        self._focus: tuple[int, int] | None = None  # (side, token): 0 = query, 1 = key
        self.scene().sigMouseMoved.connect(self._mouse_moved)

    def set_heads(self, queries: list[str], keys: list[str], matrices: list[tuple[int, np.ndarray]]) -> None:
        """Draw the given heads' matrices: query tokens on the left, key tokens on the right."""
        self.plot.clear()
        self.tokens, self.keys, self.matrices = list(queries), list(keys), matrices
        self._curves, self._labels, self._focus = [], [], None
        for side, anchor, x, tokens in ((0, (1, 0.5), 0.0, self.tokens), (1, (0, 0.5), 1.0, self.keys)):
            for i, token in enumerate(tokens):
                label = pg.TextItem(token, color="#222", anchor=anchor)
                label.setPos(x - 0.02 if side == 0 else x + 0.02, i)
                self.plot.addItem(label)
                self._labels.append(label)
        for head, matrix in matrices:
            colour = QColor(HEAD_COLOURS[head % len(HEAD_COLOURS)])
            q, k = np.nonzero(matrix >= BINS[0])
            weights = matrix[q, k]
            for low, high in zip(BINS[:-1], BINS[1:], strict=True):
                chosen = (weights >= low) & (weights < high)
                if not chosen.any():
                    continue
                xs = np.tile([0.0, 1.0], int(chosen.sum()))
                ys = np.column_stack([q[chosen], k[chosen]]).ravel().astype(float)
                colour.setAlphaF(min(1.0, 0.15 + high * 0.85))
                curve = pg.PlotCurveItem(xs, ys, connect="pairs", pen=pg.mkPen(QColor(colour), width=1 + 2 * low))
                self.plot.addItem(curve)
                self._curves.append(curve)
        self._highlight = pg.PlotCurveItem(connect="pairs")
        self.plot.addItem(self._highlight)
        count = max(len(self.tokens), len(self.keys))
        self.plot.setLimits(yMin=-1, yMax=max(count, 1), xMin=-0.8, xMax=1.8)
        self.plot.setRange(xRange=(-0.6, 1.6), yRange=(-0.5, min(count, VISIBLE_TOKENS) - 0.5), padding=0)

    def focus(self, side: int | None, token: int | None) -> None:
        """Highlight one token's lines (side 0: as query, 1: as key); None shows all again."""
        if side is None or token is None or not self.matrices:
            self._focus = None
            self._highlight.setData([], [])
            for curve in self._curves:
                curve.setOpacity(1.0)
            return
        self._focus = (side, token)
        xs, ys, texts = [], [], []
        for head, matrix in self.matrices:
            weights = matrix[token] if side == 0 else matrix[:, token]
            for other in np.nonzero(weights >= BINS[0])[0]:
                xs += [0.0, 1.0]
                ys += [float(token), float(other)] if side == 0 else [float(other), float(token)]
            best = int(np.argmax(weights))
            other_tokens = self.keys if side == 0 else self.tokens
            texts.append(f"head {head}: strongest {other_tokens[best]} ({weights[best]:.3f})")
        self._highlight.setData(np.array(xs), np.array(ys), connect="pairs", pen=pg.mkPen("#000", width=2))
        for curve in self._curves:
            curve.setOpacity(0.12)
        role = "query" if side == 0 else "key"
        own = self.tokens if side == 0 else self.keys
        self.hovered.emit(f"{own[token]} as {role}: " + "; ".join(texts))

    def _mouse_moved(self, scene_pos: QPointF) -> None:
        if not self.tokens or not self.plot.vb.sceneBoundingRect().contains(scene_pos):
            return
        point = self.plot.vb.mapSceneToView(scene_pos)
        token = int(round(point.y()))
        side = 0 if point.x() < -0.05 else 1 if point.x() > 1.05 else None
        if side is None or not 0 <= token < len(self.tokens if side == 0 else self.keys):
            if self._focus is not None:
                self.focus(None, None)
            return
        if self._focus != (side, token):
            self.focus(side, token)
