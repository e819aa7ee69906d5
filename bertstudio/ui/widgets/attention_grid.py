"""The model view: every layer x head as a small heatmap, drawn as ONE tiled ImageItem.

BertViz draws one SVG line per layer x head x token pair (tens of millions at 512 tokens);
144 plot widgets would be slow too. A single mosaic image is one texture upload however many
heads there are. Long inputs are max-pooled to the cell's pixel size (at most CELL_MAX a side;
a thumbnail cannot show more; max keeps sharp diagonals visible), and each cell is scaled to
its own maximum so weak, spread-out heads are as readable as peaked ones. The mosaic is a
uint8 image of colour indices with a lookup table: no float image, no NaN mask, no level scan.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal

from bertstudio.ui.widgets.attention_heatmap import colormap

CELL_MAX = 128
CELL_MIN = 48  # pooling below this loses too much even when the window is small
GAP_FRACTION = 0.08  # blank space between cells, as a share of a cell
GAP_INDEX = 255  # the mosaic is uint8 colour indices 0..254; 255 is the gap, drawn white


def _max_pool_axis(stack: np.ndarray, axis: int, factor: int) -> np.ndarray:
    """Max over consecutive groups of `factor` along axis -1 or -2, as `factor` elementwise maxima.

    numpy's max over a short trailing axis runs a tiny inner loop per output value (seconds at
    512 tokens); a few whole-array np.maximum calls over strided views are ~10x faster.
    """
    size = stack.shape[axis]
    pad = (-size) % factor
    if pad:
        widths = [(0, 0)] * stack.ndim
        widths[axis] = (0, pad)
        stack = np.pad(stack, widths)
    lead = stack.shape[:axis] if axis == -1 else stack.shape[:-2]
    if axis == -1:
        groups = stack.reshape(*lead, stack.shape[-1] // factor, factor)
        out = groups[..., 0].copy()
        for i in range(1, factor):
            np.maximum(out, groups[..., i], out=out)
    else:
        groups = stack.reshape(*lead, stack.shape[-2] // factor, factor, stack.shape[-1])
        out = groups[..., 0, :].copy()
        for i in range(1, factor):
            np.maximum(out, groups[..., i, :], out=out)
    return out


def pooled(stack: np.ndarray, cell_max: int = CELL_MAX) -> np.ndarray:
    """(..., R, K) max-pooled so neither side exceeds cell_max (rows first: contiguous slabs)."""
    rows, cols = stack.shape[-2:]
    fr, fc = max(1, math.ceil(rows / cell_max)), max(1, math.ceil(cols / cell_max))
    if fr == 1 and fc == 1:
        return stack
    if fr > 1:
        stack = _max_pool_axis(stack, -2, fr)
    if fc > 1:
        stack = _max_pool_axis(stack, -1, fc)
    return stack


def with_mean_column(cells: np.ndarray) -> np.ndarray:
    """layers x heads x r x k -> layers x (heads + 1) x r x k, the mean of the heads' cells last.

    Without pooling this is exactly the layer mean; with pooling it is the mean of the
    max-pooled cells (a thumbnail), which is ~16x cheaper than pooling the full-size mean.
    """
    layers, heads, r, k = cells.shape
    out = np.empty((layers, heads + 1, r, k), dtype=np.float32)
    out[:, :heads] = cells
    np.add.reduce(cells, axis=1, out=out[:, heads])
    out[:, heads] *= 1.0 / heads
    return out


def mosaic_indices(stack: np.ndarray, gap: int) -> np.ndarray:
    """layers x columns x r x k -> one uint8 image of colour indices (0..254, each cell scaled to
    its own maximum), GAP_INDEX between cells. One vectorised pass, no float image."""
    layers, columns, r, k = stack.shape
    tops = stack.reshape(layers, columns, -1).max(axis=-1)
    scale = np.divide(254.0, tops, out=np.zeros_like(tops, dtype=np.float32), where=tops > 0)
    out = np.full((layers, r + gap, columns, k + gap), GAP_INDEX, dtype=np.uint8)
    scaled = stack.transpose(0, 2, 1, 3) * scale[:, None, :, None]
    scaled += 0.5
    np.copyto(out[:, :r, :, :k], scaled, casting="unsafe")
    out = out.reshape(layers * (r + gap), columns * (k + gap))
    return out[: out.shape[0] - gap, : out.shape[1] - gap]


def mosaic(stack: np.ndarray, gap: int) -> np.ndarray:
    """Float version (0..1, NaN gaps), for callers who want values rather than colour indices."""
    image = mosaic_indices(stack, gap).astype(np.float32)
    image[image == GAP_INDEX] = np.nan
    return image / 254.0


def index_lut(name: str) -> np.ndarray:
    """256 RGBA colours: 0..254 the colour map, 255 (the gap) white."""
    lut = np.empty((256, 4), dtype=np.uint8)
    lut[:255] = colormap(name).getLookupTable(0.0, 1.0, nPts=255, alpha=True)
    lut[255] = (255, 255, 255, 255)
    return lut


class AttentionGrid(pg.GraphicsLayoutWidget):
    """Layer by row, head by column (plus a 'mean' column); `clicked(layer, column)` opens one."""

    clicked = Signal(int, int)
    hovered = Signal(str)

    def __init__(self, parent=None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self.setBackground("w")
        self.plot = self.addPlot()
        self.plot.invertY(True)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.showAxis("top")
        self.plot.hideAxis("bottom")
        for name in ("left", "top"):
            self.plot.getAxis(name).setPen(pg.mkPen("#444"))
            self.plot.getAxis(name).setTextPen(pg.mkPen("#222"))
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setLookupTable(index_lut("viridis"))
        self.plot.addItem(self.image)
        self._ticks: tuple[object, ...] = ()
        self.layers = 0
        self.columns = 0
        self.column_labels: list[str] = []
        self.pitch = (1.0, 1.0)  # view units from one cell's start to the next (rows, columns)
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self.scene().sigMouseClicked.connect(self._mouse_clicked)

    def set_colormap(self, name: str) -> None:
        self.image.setLookupTable(index_lut(name))

    def cell_pixels(self, layers: int, columns: int) -> int:
        """How many device pixels a cell gets now: pooling finer than this draws nothing more."""
        if layers <= 0 or columns <= 0:
            return CELL_MAX
        size = self.viewport().size()
        ratio = self.devicePixelRatioF()
        fit = min(size.height() / layers, size.width() / columns) * ratio
        return int(min(CELL_MAX, max(CELL_MIN, math.ceil(fit))))

    def set_attentions(self, stack: np.ndarray, column_labels: list[str], cell_max: int = CELL_MAX) -> None:
        """stack: layers x columns x R x K (heads, then any extra columns such as the mean)."""
        self.set_cells(pooled(stack, cell_max), column_labels)

    def set_cells(self, cells: np.ndarray, column_labels: list[str]) -> None:
        """Draw already pooled cells (layers x columns x r x k), e.g. made by `pooled` in a worker."""
        r, k = cells.shape[-2:]
        gap = max(1, round(GAP_FRACTION * max(r, k)))
        image = mosaic_indices(cells, gap)
        self.layers, self.columns = cells.shape[:2]
        self.column_labels = list(column_labels)
        self.pitch = (float(r + gap), float(k + gap))
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
            self.hovered.emit(f"layer {cell[0]}, {self.column_labels[cell[1]]}: click to open")

    def _mouse_clicked(self, event) -> None:  # noqa: ANN001
        if event.button() != Qt.MouseButton.LeftButton:
            return
        cell = self._cell_from_scene(event.scenePos())
        if cell is not None:
            self.clicked.emit(*cell)
