"""One attention matrix as a large heatmap: token labels on both axes, colour bar, hover readout.

pyqtgraph's MatrixDisplayExample shape: a row-major ImageItem in a PlotItem with invertY,
a ColorBarItem attached to it, token labels from an AxisItem that picks as many labels as
fit (every k-th token when they do not) and draws the key tokens rotated.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QKeyEvent, QPainter

from bertstudio.ui import plot_style
from bertstudio.ui.theme import Colors

COLORMAPS = ("viridis", "inferno", "magma", "plasma", "cividis", "CET-L1", "CET-L4")
DIVERGING = "CET-D1"  # blue - white - red: for differences B - A, zero in the middle
ARROWS = {Qt.Key.Key_Left: (0, -1), Qt.Key.Key_Right: (0, 1), Qt.Key.Key_Up: (-1, 0), Qt.Key.Key_Down: (1, 0)}


def colormap(name: str) -> pg.ColorMap:
    cmap = pg.colormap.get(name)
    return cmap.reverse() if name == "CET-L1" else cmap  # CET-L1 runs white -> black: dark = strong


class TokenAxis(pg.AxisItem):
    """Token labels at integer positions; only as many as fit, rotated on a horizontal axis."""

    LABEL_PX = 14  # room one label needs along the axis

    def __init__(self, orientation: str, rotate: bool = False) -> None:
        super().__init__(orientation)
        self.tokens: list[str] = []
        self.rotate = rotate
        self.setStyle(autoExpandTextSpace=False, tickTextOffset=4)

    def set_tokens(self, tokens: list[str]) -> None:
        self.tokens = list(tokens)
        longest = max((len(t) for t in self.tokens), default=4)
        room = int(min(max(longest, 3), 16) * 7 + 12)
        if self.orientation in ("left", "right"):
            self.setWidth(room)
        else:
            self.setHeight(room if self.rotate else 24)
        self.picture = None
        self.update()

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:  # noqa: N802, N803
        count = len(self.tokens)
        minVal, maxVal = sorted((minVal, maxVal))  # noqa: N806 - an inverted axis passes them reversed
        low, high = max(0, math.ceil(minVal)), min(count - 1, math.floor(maxVal))
        if count == 0 or high < low:
            return []
        fit = max(1, int(size // self.LABEL_PX))
        step = max(1, math.ceil((high - low + 1) / fit))
        first = low + (-low % step)
        return [(step, list(range(first, high + 1, step)))]

    def tickStrings(self, values: list, scale: float, spacing: float) -> list[str]:  # noqa: N802
        out = []
        for value in values:
            index = int(round(value))
            token = self.tokens[index] if 0 <= index < len(self.tokens) else ""
            out.append(token if len(token) <= 16 else token[:15] + "…")
        return out

    def drawPicture(self, p: QPainter, axis_spec, tick_specs, text_specs) -> None:  # noqa: N802, ANN001
        if not self.rotate:
            super().drawPicture(p, axis_spec, tick_specs, text_specs)
            return
        super().drawPicture(p, axis_spec, tick_specs, [])
        p.setPen(self.textPen())
        if self.style.get("tickFont") is not None:
            p.setFont(self.style["tickFont"])
        length = self.height() - 8
        for rect, _flags, text in text_specs:
            p.save()
            p.translate(rect.center().x(), rect.top())
            p.rotate(-90)
            p.drawText(QRectF(-length, -rect.height() / 2, length, rect.height()),
                       int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), text)
            p.restore()


class AttentionHeatmap(pg.GraphicsLayoutWidget):
    """Queries down the left, keys along the bottom; `hovered` carries "query -> key: weight"."""

    hovered = Signal(str)
    arrow = Signal(int, int)  # (layers, heads) to move by, from the arrow keys
    clicked = Signal(int, int)  # (row, column) of a left click on a cell

    def __init__(self, parent=None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.left = TokenAxis("left")
        self.bottom = TokenAxis("bottom", rotate=True)
        self.plot = self.addPlot(axisItems={"left": self.left, "bottom": self.bottom})
        self.plot.invertY(True)
        self.plot.setAspectLocked(False)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setLabel("left", "query")
        self.plot.setLabel("bottom", "key")
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=colormap("viridis"), interactive=True, width=14)
        self.bar.setImageItem(self.image, insert_in=self.plot)
        # the bar handed the still empty image its default levels as "deferred levels", which
        # pyqtgraph would apply after our first setImage: consume them on a placeholder now
        self.image.setImage(np.zeros((1, 1), dtype=np.float32), autoLevels=False, levels=(0.0, 1.0))
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.query_tokens: list[str] = []
        self.key_tokens: list[str] = []
        self.readout = ""
        self._shape: tuple[int, int] = (0, 0)
        self._title = ""
        # readout of one cell: (query token, key token, value, row, column) -> text
        self.describe: Callable[[str, str, float, int, int], str] = (
            lambda q, k, value, _r, _c: f"{q} -> {k}: {value:.4f}"
        )
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self.scene().sigMouseClicked.connect(self._mouse_clicked)
        self.hidden_labels: set[str] = set()  # axis captions a view hid: a theme change keeps them hidden
        plot_style.style_plot(self)

    def getPlotItem(self) -> pg.PlotItem:  # noqa: N802 - what plot_style expects of a plot widget
        return self.plot

    def apply_theme(self, colors: Colors) -> None:
        axis = self.bar.axis
        axis.setPen(pg.mkPen(colors.muted))
        axis.setTextPen(pg.mkPen(colors.foreground))
        for side in self.hidden_labels:
            self.plot.getAxis(side).showLabel(False)

    def hide_label(self, side: str) -> None:
        self.hidden_labels.add(side)
        self.plot.getAxis(side).showLabel(False)

    def set_colormap(self, name: str) -> None:
        self.bar.setColorMap(colormap(name))

    def set_matrix(
        self,
        matrix: np.ndarray,
        query_tokens: list[str],
        key_tokens: list[str],
        title: str = "",
        levels: tuple[float, float] | None = None,
    ) -> None:
        """Show a matrix; by default the colour bar spans 0 to its largest value so weak heads stay visible.

        Cheap when only the values change (a head switch): one image upload with known levels
        (no level scan), and the token axes, limits and title are left alone unless they changed.
        """
        self.matrix = matrix
        rows, cols = matrix.shape
        if matrix.size == 0:  # nothing to show (e.g. no comparison): hide, keep the last texture
            self.image.setVisible(False)
            self.query_tokens, self.key_tokens, self._shape = [], [], (0, 0)
            self.left.set_tokens([])
            self.bottom.set_tokens([])
            self._title = title
            self.plot.setTitle(title)
            return
        self.image.setVisible(True)
        if levels is None:
            top = float(matrix.max()) if matrix.size else 1.0
            levels = (0.0, top if top > 0 else 1.0)
        self.image.setImage(matrix, autoLevels=False, levels=levels)  # one render: the bar only follows
        # the bar snaps dragged levels to multiples of `rounding` (default 1, which turns any
        # attention range into 0..1 on the next region event): a thousandth of the span instead
        self.bar.rounding = max((levels[1] - levels[0]) / 1000.0, 1e-12)
        self.bar.setLevels(levels, update_items=False)
        if (rows, cols) != self._shape:
            self.image.setRect(QRectF(-0.5, -0.5, cols, rows))
        if (rows, cols) != self._shape or self.query_tokens != query_tokens or self.key_tokens != key_tokens:
            self.query_tokens, self.key_tokens = list(query_tokens), list(key_tokens)
            self.left.set_tokens(self.query_tokens)
            self.bottom.set_tokens(self.key_tokens)
            self.plot.setLimits(xMin=-0.5, xMax=cols - 0.5, yMin=-0.5, yMax=rows - 0.5)
            self.plot.setRange(xRange=(-0.5, cols - 0.5), yRange=(-0.5, rows - 0.5), padding=0)
            self._shape = (rows, cols)
        if title != self._title:
            self._title = title
            self.plot.setTitle(title)
        if self.readout:  # the value under a still mouse changed with the matrix
            self.readout = ""

    def readout_at(self, query: int, key: int) -> str:
        if not (0 <= query < self.matrix.shape[0] and 0 <= key < self.matrix.shape[1]):
            return ""
        return self.describe(self.query_tokens[query], self.key_tokens[key], float(self.matrix[query, key]), query, key)

    def _mouse_moved(self, scene_pos: QPointF) -> None:
        if not self.plot.sceneBoundingRect().contains(scene_pos):
            return
        point = self.plot.vb.mapSceneToView(scene_pos)
        text = self.readout_at(int(round(point.y())), int(round(point.x())))
        if text != self.readout:
            self.readout = text
            self.hovered.emit(text)

    def _mouse_clicked(self, event) -> None:  # noqa: ANN001
        if event.button() != Qt.MouseButton.LeftButton or not self.plot.sceneBoundingRect().contains(event.scenePos()):
            return
        point = self.plot.vb.mapSceneToView(event.scenePos())
        row, column = int(round(point.y())), int(round(point.x()))
        if 0 <= row < self.matrix.shape[0] and 0 <= column < self.matrix.shape[1]:
            self.clicked.emit(row, column)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        move = ARROWS.get(Qt.Key(event.key()))
        if move is None:
            super().keyPressEvent(event)
            return
        self.arrow.emit(*move)
        event.accept()
