"""The model view: every layer x head as a small heatmap, drawn as ONE tiled ImageItem.

BertViz draws one SVG line per layer x head x token pair (tens of millions at 512 tokens);
144 plot widgets would be slow too. A single mosaic image is one texture upload however many
heads there are. Long inputs are max-pooled to at most CELL_MAX pixels a side per head (a
thumbnail cannot show more; max keeps sharp diagonals visible), and each cell is scaled to its
own maximum so weak, spread-out heads are as readable as peaked ones.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal

from bertstudio.ui.widgets.attention_heatmap import colormap

CELL_MAX = 128
GAP_FRACTION = 0.08  # blank space between cells, as a share of a cell


def pooled(stack: np.ndarray, cell_max: int = CELL_MAX) -> np.ndarray:
    """(..., R, K) max-pooled so neither side exceeds cell_max."""
    rows, cols = stack.shape[-2:]
    fr, fc = max(1, math.ceil(rows / cell_max)), max(1, math.ceil(cols / cell_max))
    if fr == 1 and fc == 1:
        return stack
    pad_r, pad_c = (-rows) % fr, (-cols) % fc
    if pad_r or pad_c:
        stack = np.pad(stack, [(0, 0)] * (stack.ndim - 2) + [(0, pad_r), (0, pad_c)])
    lead = stack.shape[:-2]
    # two contiguous reductions are much faster than one max over two strided axes
    cols_pooled = stack.reshape(*lead, stack.shape[-2], stack.shape[-1] // fc, fc).max(axis=-1)
    return cols_pooled.reshape(*lead, stack.shape[-2] // fr, fr, cols_pooled.shape[-1]).max(axis=-2)


def mosaic(stack: np.ndarray, gap: int) -> np.ndarray:
    """layers x columns x r x k -> one (layers*(r+gap)-gap) x (columns*(k+gap)-gap) image, NaN gaps."""
    layers, columns, r, k = stack.shape
    tops = stack.reshape(layers, columns, -1).max(axis=-1)
    scaled = stack / np.where(tops > 0, tops, 1.0)[..., None, None]
    out = np.full((layers, r + gap, columns, k + gap), np.nan, dtype=np.float32)
    out[:, :r, :, :k] = scaled.transpose(0, 2, 1, 3)
    out = out.reshape(layers * (r + gap), columns * (k + gap))
    return out[: out.shape[0] - gap, : out.shape[1] - gap]


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
        self.image.setColorMap(colormap("viridis"))
        self.plot.addItem(self.image)
        self.layers = 0
        self.columns = 0
        self.column_labels: list[str] = []
        self.pitch = (1.0, 1.0)  # view units from one cell's start to the next (rows, columns)
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self.scene().sigMouseClicked.connect(self._mouse_clicked)

    def set_colormap(self, name: str) -> None:
        self.image.setColorMap(colormap(name))

    def set_attentions(self, stack: np.ndarray, column_labels: list[str]) -> None:
        """stack: layers x columns x R x K (heads, then any extra columns such as the mean)."""
        self.set_cells(pooled(stack), column_labels)

    def set_cells(self, cells: np.ndarray, column_labels: list[str]) -> None:
        """Draw already pooled cells (layers x columns x r x k), e.g. made by `pooled` in a worker."""
        stack = cells
        r, k = cells.shape[-2:]
        gap = max(1, round(GAP_FRACTION * max(r, k)))
        image = mosaic(cells, gap)
        self.layers, self.columns = stack.shape[:2]
        self.column_labels = list(column_labels)
        self.pitch = (float(r + gap), float(k + gap))
        self.image.setImage(image, levels=(0.0, 1.0))
        self.image.setRect(QRectF(0, 0, image.shape[1], image.shape[0]))
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
