"""The model view: every layer x head as a small heatmap, drawn as ONE tiled ImageItem.

BertViz draws one SVG line per layer x head x token pair (tens of millions at 512 tokens);
144 plot widgets would be slow too. A single mosaic image is one texture upload however many
heads there are. Long inputs are max-pooled to the cell's pixel size (at most CELL_MAX a side;
a thumbnail cannot show more; max keeps sharp diagonals visible), and each cell is scaled to
its own maximum so weak, spread-out heads are as readable as peaked ones. The mosaic is a
uint8 image of colour indices with a lookup table: no float image, no NaN mask, no level scan.
The pooling and the mosaic are numpy in core (core.tasks.attention.bundle); this widget only draws.
A click opens a head; Ctrl+click selects heads (outlined) to switch off.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal

from bertstudio.core.tasks.attention.bundle import CELL_MAX, GAP_INDEX, mosaic_indices
from bertstudio.ui import plot_style, theme
from bertstudio.ui.theme import Colors
from bertstudio.ui.widgets.attention_heatmap import colormap

CELL_MIN = 48  # pooling below this loses too much even when the window is small
GAP_FRACTION = 0.08  # blank space between cells, as a share of a cell
SELECTED_PEN = "#ff2d00"  # outline of the heads selected to switch off
ROW_MIN_PIXELS = 18  # a layer's row never gets less: its "L3" label stays apart from the next (900x600)
EMPTY_MIN_HEIGHT = 80
EMPTY_TEXT = "Show attention (Ctrl+Enter) to see every layer × head here."


def index_lut(name: str, gap: str = "#ffffff") -> np.ndarray:
    """256 RGBA colours: 0..254 the colour map, 255 (the gap) the background's colour."""
    lut = np.empty((256, 4), dtype=np.uint8)
    lut[:255] = colormap(name).getLookupTable(0.0, 1.0, nPts=255, alpha=True)
    lut[GAP_INDEX] = pg.mkColor(gap).getRgb()
    return lut


class AttentionGrid(pg.GraphicsLayoutWidget):
    """Layer by row, head by column (plus a 'mean' column); `clicked(layer, column)` opens one."""

    clicked = Signal(int, int)
    ctrl_clicked = Signal(int, int)  # (layer, column) with Ctrl held: add to / remove from the selection
    hovered = Signal(str)

    def __init__(self, parent=None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.plot = self.addPlot()
        self.plot.invertY(True)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.showAxis("top")
        self.plot.hideAxis("bottom")
        self.colormap_name = "viridis"
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setLookupTable(index_lut(self.colormap_name, theme.colors().background))
        self.plot.addItem(self.image)
        self.outline = pg.PlotCurveItem(pen=pg.mkPen(SELECTED_PEN, width=3), connect="finite")
        self.outline.setZValue(10)
        self.plot.addItem(self.outline)
        self.selected: tuple[tuple[int, int], ...] = ()
        self._gap = 1
        self._ticks: tuple[object, ...] = ()
        self.layers = 0
        self.columns = 0
        self.column_labels: list[str] = []
        self.pitch = (1.0, 1.0)  # view units from one cell's start to the next (rows, columns)
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self.scene().sigMouseClicked.connect(self._mouse_clicked)
        # before a run: a plain sentence, not empty axes reading -0.4..0.4
        self.empty = pg.TextItem(EMPTY_TEXT, anchor=(0.5, 0.5), color=theme.colors().foreground)
        self.plot.addItem(self.empty)
        plot_style.style_plot(self)  # the theme's background and axes, again whenever the theme changes
        self.show_empty()

    def getPlotItem(self) -> pg.PlotItem:  # noqa: N802 - what plot_style expects of a plot widget
        return self.plot

    def apply_theme(self, colors: Colors) -> None:
        """The gaps between cells take the background's colour (white cells' frames on dark were glaring)."""
        self.image.setLookupTable(index_lut(self.colormap_name, colors.background))
        self.empty.setColor(colors.foreground)

    def show_empty(self) -> None:
        """No cells: the axes hidden and the sentence saying what comes here (not `clear`: the
        layout widget's own clear() removes the plot)."""
        self.image.clear()
        self.setMinimumHeight(EMPTY_MIN_HEIGHT)
        self.layers = self.columns = 0
        self.column_labels = []
        self._ticks = ()
        self.outline.setData([], [])
        for side in ("top", "left"):
            self.plot.hideAxis(side)
        self.empty.setVisible(True)
        self.empty.setPos(0.5, 0.5)
        self.plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)

    def set_colormap(self, name: str) -> None:
        self.colormap_name = name
        self.image.setLookupTable(index_lut(name, theme.colors().background))

    def cell_pixels(self, layers: int, columns: int) -> int:
        """How many device pixels a cell gets now: pooling finer than this draws nothing more."""
        if layers <= 0 or columns <= 0:
            return CELL_MAX
        size = self.viewport().size()
        ratio = self.devicePixelRatioF()
        fit = min(size.height() / layers, size.width() / columns) * ratio
        return int(min(CELL_MAX, max(CELL_MIN, math.ceil(fit))))

    def set_cells(self, cells: np.ndarray, column_labels: list[str]) -> None:
        """Draw already pooled cells (layers x columns x r x k), e.g. made by `pooled` in a worker."""
        r, k = cells.shape[-2:]
        self.empty.setVisible(False)
        for side in ("top", "left"):
            self.plot.showAxis(side)
        gap = max(1, round(GAP_FRACTION * max(r, k)))
        image = mosaic_indices(cells, gap)
        self.layers, self.columns = cells.shape[:2]
        # the page scrolls rather than squeezing the rows until their labels overlap (L0..L5 in 70 px)
        self.setMinimumHeight(min(480, 40 + ROW_MIN_PIXELS * self.layers))
        self.column_labels = list(column_labels)
        self.pitch = (float(r + gap), float(k + gap))
        self._gap = gap
        # uint8 indices + a lookup table: pyqtgraph's fastest path, no levels scan, no NaN mask
        self.image.setImage(image, autoLevels=False, levels=(0, 255))
        self.image.setRect(QRectF(0, 0, image.shape[1], image.shape[0]))
        ticks = (self.layers, tuple(self.column_labels), self.pitch, gap)
        if ticks != self._ticks:  # axis pictures are only rebuilt when the layout changed
            self._ticks = ticks
            self.plot.getAxis("left").setTicks(
                [[((i + 0.5) * self.pitch[0] - gap / 2, f"L{i}") for i in range(self.layers)]]
            )
            self.plot.getAxis("top").setTicks(
                [[((j + 0.5) * self.pitch[1] - gap / 2, label) for j, label in enumerate(self.column_labels)]]
            )
            self.plot.setRange(xRange=(0, image.shape[1]), yRange=(0, image.shape[0]), padding=0.01)
        self.set_selected(self.selected)

    def set_selected(self, heads: tuple[tuple[int, int], ...]) -> None:
        """Outline these (layer, head) cells: the heads chosen to switch off."""
        self.selected = tuple(heads)
        xs: list[float] = []
        ys: list[float] = []
        for layer, head in self.selected:
            if not (layer < self.layers and head < self.columns):
                continue
            x0, y0 = head * self.pitch[1] - self._gap / 2, layer * self.pitch[0] - self._gap / 2
            x1, y1 = x0 + self.pitch[1], y0 + self.pitch[0]
            xs += [x0, x1, x1, x0, x0, np.nan]
            ys += [y0, y0, y1, y1, y0, np.nan]
        self.outline.setData(np.array(xs, dtype=float), np.array(ys, dtype=float))
    def cell_at(self, x: float, y: float) -> tuple[int, int] | None:
        """(layer, column) under a point in view coordinates, or None between/outside cells."""
        layer, column = int(y // self.pitch[0]), int(x // self.pitch[1])
        if x < 0 or y < 0 or not (0 <= layer < self.layers and 0 <= column < self.columns):
            return None
        return layer, column

    def cell_center(self, layer: int, column: int) -> QPointF:
        """Where a cell sits in view coordinates (for tests and keyboard navigation)."""
        return QPointF((column + 0.4) * self.pitch[1], (layer + 0.4) * self.pitch[0])

    def _cell_from_scene(self, scene_pos: QPointF) -> tuple[int, int] | None:
        if not self.columns or not self.plot.vb.sceneBoundingRect().contains(scene_pos):
            return None
        point = self.plot.vb.mapSceneToView(scene_pos)
        return self.cell_at(point.x(), point.y())

    def _mouse_moved(self, scene_pos: QPointF) -> None:
        cell = self._cell_from_scene(scene_pos)
        if cell is not None:
            self.hovered.emit(f"layer {cell[0]}, {self.column_labels[cell[1]]}: "
                              "click to open, Ctrl+click to select to switch off")

    def _mouse_clicked(self, event) -> None:  # noqa: ANN001
        if event.button() != Qt.MouseButton.LeftButton:
            return
        cell = self._cell_from_scene(event.scenePos())
        if cell is None:
            return
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.ctrl_clicked.emit(*cell)
        else:
            self.clicked.emit(*cell)
