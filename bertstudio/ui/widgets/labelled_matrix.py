"""A square matrix over one list of labels (rows and columns alike): a heatmap on a fixed colour
scale with each cell's value written in it while the cells are few. The confusion matrix and the
similarity matrix are two of them; they differ in what a cell holds, not in how it is drawn.

pyqtgraph and numpy are imported on first use: the Similarity tab builds one before the window
shows, and the window shows before either is imported (tests/test_startup.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtWidgets import QWidget

from bertstudio.ui.widgets.layouts import column


def short(label: str, width: int = 14) -> str:
    """A tick label cut to `width` characters ("…" at the end)."""
    return label if len(label) <= width else label[: width - 1] + "…"


class LabelledMatrix(QWidget):
    def __init__(self, levels: tuple[float, float], colour_map: str, caption: str, max_written: int,
                 axes: tuple[str, str] = ("", ""), parent: QWidget | None = None) -> None:
        """`levels`: the fixed colour scale; `caption`: the colour bar's; `max_written`: cells beyond
        which values are no longer written (the tooltip says them); `axes`: (rows, columns) captions."""
        super().__init__(parent)
        import pyqtgraph as pg

        from bertstudio.ui import plot_style

        self.levels, self.max_written = levels, max_written
        self.plot = pg.PlotWidget()
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        item = self.plot.getPlotItem()
        item.invertY(True)
        for side, text in zip(("left", "bottom"), axes, strict=True):
            if text:
                item.setLabel(side, text)
        item.setContentsMargins(0, 10, 4, 0)  # room above for the top row's edge and the colour bar's top label
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.colour_bar = pg.ColorBarItem(values=levels, colorMap=pg.colormap.get(colour_map), interactive=False,
                                          label=caption)
        self.colour_bar.setImageItem(self.image, insert_in=item)
        plot_style.style_plot(self.plot)  # theme colours (colour bar included), no SI prefix
        self.texts: list[Any] = []
        self.labels: tuple[str, ...] = ()
        column(self.plot, owner=self)

    def show_cells(self, labels: Sequence[str], shades: Any, cell: Callable[[int, int], tuple[str, bool]]) -> None:
        """Draw the matrix: `shades` (n x n) on the colour scale; `cell(row, column)` gives what the
        cell says and whether its shade is dark (white text), asked only while the cells are few
        enough to write. An empty `labels` shows 0-1 axes, not pyqtgraph's default."""
        import numpy as np
        import pyqtgraph as pg

        for text in self.texts:
            self.plot.removeItem(text)
        self.texts = []
        self.labels = tuple(labels)
        size = len(self.labels)
        self.image.setImage(np.asarray(shades, dtype=np.float32).reshape(size, size), levels=self.levels,
                            autoLevels=False)
        ticks = [(i + 0.5, short(label)) for i, label in enumerate(self.labels)]
        item = self.plot.getPlotItem()
        item.getAxis("left").setTicks([ticks])
        item.getAxis("bottom").setTicks([ticks])
        if size * size <= self.max_written:
            for row in range(size):
                for column in range(size):
                    value, dark = cell(row, column)
                    text = pg.TextItem(value, color="w" if dark else "k", anchor=(0.5, 0.5))
                    text.setPos(column + 0.5, row + 0.5)
                    self.plot.addItem(text)
                    self.texts.append(text)
        item.setRange(xRange=(0, max(1, size)), yRange=(0, max(1, size)), padding=0.02 if size else 0)
