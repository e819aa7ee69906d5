"""The embedding projector's scatter: one point per row, coloured by a category (gold, prediction,
correct), the row's text on hover; click (Ctrl: add) or drag a box to select points."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtGui import QPen
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from bertstudio.ui import plot_style, theme

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
OTHER = "#b0b0b0"  # categories past the palette


class ProjectorPlot(QWidget):
    selection_changed = Signal(list)  # row indices

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.points = np.zeros((0, 2), dtype=np.float32)
        self.texts: list[str] = []
        self.categories: list[str] = []
        self.selected: list[int] = []
        self.plot = pg.PlotWidget()
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.scatter = pg.ScatterPlotItem(size=8, hoverable=True, hoverSize=12, tip=self._tip)
        self.scatter.sigClicked.connect(self._clicked)
        self.plot.addItem(self.scatter)
        self.box = pg.RectROI((0, 0), (1, 1), pen=self._box_pen())
        self.box.setVisible(False)
        self.box.sigRegionChangeFinished.connect(self._box_moved)
        self.plot.addItem(self.box)
        self.box_select = QCheckBox("Select with a box")
        self.box_select.setToolTip("Show a box; move and resize it to select the points inside")
        self.box_select.toggled.connect(self._box_toggled)
        self.legend = QLabel()  # beside the plot, never over the points
        self.legend.setWordWrap(True)
        self.legend.setMinimumWidth(140)
        self.legend.setMaximumWidth(220)
        side = QVBoxLayout()
        side.addWidget(self.legend)
        side.addWidget(self.box_select)
        side.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addLayout(side)
        plot_style.style_plot(self.plot, on_theme=self._theme_changed)  # theme colours, no SI prefix

    @staticmethod
    def _box_pen() -> QPen:
        return pg.mkPen(theme.colors().foreground, width=1, style=pg.QtCore.Qt.PenStyle.DashLine)

    def _theme_changed(self, _colors: theme.Colors) -> None:
        """Outlines in the background colour, the selection in the text colour: both themes."""
        self.box.setPen(self._box_pen())
        if len(self.points):
            self.colour_by(self.categories)
            self._outline()

    def set_points(self, points: np.ndarray, texts: Sequence[str], categories: Sequence[str],
                   axis_labels: tuple[str, str] = ("1", "2")) -> None:
        self.points = np.asarray(points, dtype=np.float32).reshape(-1, 2)
        self.texts = list(texts)
        self.plot.getPlotItem().setLabel("bottom", axis_labels[0])
        self.plot.getPlotItem().setLabel("left", axis_labels[1])
        self.colour_by(categories)
        self.plot.getPlotItem().autoRange()
        self.select([])

    def colour_by(self, categories: Sequence[str]) -> None:
        self.categories = [str(c) for c in categories]
        keys = list(dict.fromkeys(self.categories))
        colours = {key: PALETTE[i] if i < len(PALETTE) else OTHER for i, key in enumerate(keys)}
        brushes = [pg.mkBrush(colours[c]) for c in self.categories]
        self.scatter.setData(x=self.points[:, 0], y=self.points[:, 1], data=list(range(len(self.points))),
                             brush=brushes, pen=pg.mkPen(theme.colors().background, width=0.5))
        counts = {key: self.categories.count(key) for key in keys}
        self.legend.setText("<br>".join(
            f"<span style='color:{colours[k]}'>■</span> {html.escape(k)} ({counts[k]})" for k in keys[:20])
            + ("<br>…" if len(keys) > 20 else ""))

    def _tip(self, x: float, y: float, data: object) -> str:
        index = int(data)  # type: ignore[call-overload]
        text = self.texts[index] if index < len(self.texts) else ""
        return f"row {index} · {self.categories[index] if index < len(self.categories) else ''}\n{text[:300]}"

    def select(self, rows: Sequence[int]) -> None:
        self.selected = sorted(set(int(r) for r in rows))
        self._outline()
        self.selection_changed.emit(self.selected)

    def _outline(self) -> None:
        chosen = set(self.selected)
        colors = theme.colors()
        chosen_pen, other_pen = pg.mkPen(colors.foreground, width=2), pg.mkPen(colors.background, width=0.5)
        if len(self.points):
            self.scatter.setPen([chosen_pen if i in chosen else other_pen for i in range(len(self.points))])

    def _clicked(self, _item: object, spots: Sequence[object], event: object = None) -> None:
        rows = [int(spot.data()) for spot in spots]  # type: ignore[attr-defined]
        add = event is not None and bool(event.modifiers() & pg.QtCore.Qt.KeyboardModifier.ControlModifier)  # type: ignore[attr-defined]
        self.select((self.selected + rows) if add else rows)

    def _box_toggled(self, on: bool) -> None:
        if on and len(self.points):
            low, high = self.points.min(axis=0), self.points.max(axis=0)
            span = np.maximum(high - low, 1e-6)
            self.box.setPos(low + span * 0.25)
            self.box.setSize(span * 0.5)
        self.box.setVisible(on)
        if on:
            self._box_moved()

    def _box_moved(self, *_args: object) -> None:
        if not self.box.isVisible() or not len(self.points):
            return
        x, y = self.box.pos()
        w, h = self.box.size()
        inside = ((self.points[:, 0] >= x) & (self.points[:, 0] <= x + w) & (self.points[:, 1] >= y)
                  & (self.points[:, 1] <= y + h))
        self.select(np.flatnonzero(inside).tolist())
