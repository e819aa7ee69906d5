"""All methods on one input: one heatmap row per method (tokens along x), their rank agreement,
and the faithfulness of each.

Methods differ in scale (a probability difference, a gradient norm, a regression coefficient), so
each row is divided by its own largest |attribution|: colours compare where a method puts its
weight, not how much. Special tokens are left out (perturbation methods never change them). The
agreement table is Spearman's rank correlation over the same tokens (core.explain.compare).
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from bertstudio.core.explain.methods import SHORT
from bertstudio.ui.theme import ink_on
from bertstudio.ui.widgets.attribution_view import COLORMAP, colour_of, shown_token
from bertstudio.ui.widgets.elided_label import ElidedLabel
from bertstudio.ui.widgets.explain_faithfulness import FaithfulnessTable
from bertstudio.ui.widgets.layouts import bar_above, column, splitter

MAX_TICKS = 32  # token labels along x; beyond this every n-th token is named (all are in the hover line)


def short_name(explanation: Any) -> str:
    """A row label: "IG [PAD]", "IG zero", "LIME"..."""
    name = SHORT.get(explanation.method, explanation.method)
    if explanation.baseline is not None:
        name += " zero" if explanation.baseline == "zero" else " [PAD]"
    return name


MIN_HEATMAP = 160  # pixels: seven method rows, the token axis and the agreement's seven rows stay readable


class MethodsView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        import pyqtgraph as pg

        from bertstudio.ui import plot_style

        super().__init__(parent)
        self.methods: Any = None
        self.columns: list[int] = []  # token index (in every explanation) per heatmap column
        self.summary = ElidedLabel("Choose “All methods, side by side” and explain: every method on the same input.")
        self.hover = ElidedLabel()
        self.hover.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.plot_widget = pg.PlotWidget()
        self.plot = self.plot_widget.getPlotItem()
        self.plot.invertY(True)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(values=(-1, 1), colorMap=pg.colormap.get(COLORMAP), interactive=False,
                                        label="÷ row max |attr.|")
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        self.colorbar.axis.enableAutoSIPrefix(False)
        self._empty()
        plot_style.style_plot(self.plot_widget)
        self.plot_widget.scene().sigMouseMoved.connect(self._hovered)

        self.agreement = QTableWidget(0, 0)
        self.agreement.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.agreement.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.agreement.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.agreement.verticalHeader().setMinimumSectionSize(self.fontMetrics().height() + 1)  # 7 rows in 160 px
        self.faithfulness = FaithfulnessTable()
        agreement = column(QLabel("Rank agreement (Spearman, non-special tokens)"), self.agreement)
        top = splitter(Qt.Orientation.Horizontal, self.plot_widget, agreement, sizes=(760, 440))
        self.split = splitter(Qt.Orientation.Vertical, top, self.faithfulness, sizes=(300, 220))
        line = QHBoxLayout()  # the hovered cell on the summary's line: no row waits for it
        line.addWidget(self.summary, 3)
        line.addWidget(self.hover, 2)
        bar_above(self, line, self.split)

    def _empty(self) -> None:
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).setTicks([[]])
        self.plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)

    def clear(self) -> None:
        self.methods, self.columns = None, []
        self.image.clear()
        self.agreement.setRowCount(0)
        self.agreement.setColumnCount(0)
        self.faithfulness.clear()
        self.hover.setText("")
        self._empty()

    def matrix(self) -> Any:
        """methods x tokens, each row divided by its largest |value| (a row of zeros stays zero)."""
        import numpy as np

        rows = np.array([[e.attributions[i] for i in self.columns] for e in self.methods.explanations], dtype=float)
        scale = np.abs(rows).max(axis=1, keepdims=True) if rows.size else rows
        return np.divide(rows, scale, out=np.zeros_like(rows), where=scale > 0)

    def show_methods(self, methods: Any) -> None:
        """A core.explain.compare.MethodSet."""
        first = methods.explanations[0]
        self.methods = methods
        self.columns = [i for i, special in enumerate(first.special) if not special]
        names = [short_name(e) for e in methods.explanations]
        values = self.matrix()
        rows, width = values.shape
        self.image.setImage(values, autoLevels=False)
        self.image.setRect(QRectF(-0.5, -0.5, width, rows))
        self.colorbar.setLevels((-1.0, 1.0))
        step = max(1, math.ceil(width / MAX_TICKS))
        tokens = [shown_token(first.tokens[i]) for i in self.columns]
        self.plot.getAxis("bottom").setTicks([[(c, tokens[c]) for c in range(0, width, step)]])
        self.plot.getAxis("left").setTicks([[(r, name) for r, name in enumerate(names)]])
        self.plot.setRange(xRange=(-0.5, width - 0.5), yRange=(-0.5, rows - 0.5), padding=0)
        sampled = next((e for e in methods.explanations if e.samples is not None), None)
        extra = f" · LIME / SHAP: {sampled.samples} samples, seed {sampled.seed}" if sampled else ""
        steps = next((e.steps for e in methods.explanations if e.steps is not None), None)
        self.summary.setText(f"{len(names)} explanations of {first.target_label} = {first.score:.4f}"
                             f"{f' · IG: {steps} steps' if steps else ''}{extra}")
        self._show_agreement(names, methods.agreement)
        self.faithfulness.show_rows([(n, e.faithfulness) for n, e in zip(methods.names, methods.explanations,
                                                                          strict=True)])
        if any(e.faithfulness is not None for e in methods.explanations):
            self.fit_faithfulness(len(methods.explanations))

    def fit_faithfulness(self, rows: int) -> None:
        """Every method's faithfulness row in view without scrolling, where the heatmap keeps room for its
        rows (at an 800-pixel window the table showed four of seven and hid LIME and SHAP)."""
        total = sum(self.split.sizes())
        if total <= 0:
            return
        wanted = self.faithfulness.height_for(rows)
        heatmap = max(total - wanted, MIN_HEATMAP)
        self.split.setSizes([heatmap, total - heatmap])

    def _show_agreement(self, names: list[str], matrix: Any) -> None:
        self.agreement.setRowCount(len(names))
        self.agreement.setColumnCount(len(names))
        self.agreement.setHorizontalHeaderLabels(names)
        self.agreement.setVerticalHeaderLabels(names)
        for r, row in enumerate(matrix):
            for c, value in enumerate(row):
                item = QTableWidgetItem("–" if value is None else f"{value:+.2f}")
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                if value is not None:
                    colour = colour_of(value, 1.0)
                    item.setBackground(QColor(colour))
                    item.setForeground(QColor(ink_on(colour)))
                item.setToolTip(f"{names[r]} vs {names[c]}: "
                                + ("no ranking (all values equal)" if value is None else f"Spearman {value:+.3f}"))
                self.agreement.setItem(r, c, item)

    def _hovered(self, position: QPointF) -> None:
        if self.methods is None or not self.plot.sceneBoundingRect().contains(position):
            return
        point = self.plot.vb.mapSceneToView(position)
        c, r = round(point.x()), round(point.y())
        explanations = self.methods.explanations
        if 0 <= r < len(explanations) and 0 <= c < len(self.columns):
            e = explanations[r]
            i = self.columns[c]
            self.hover.setText(f"{self.methods.names[r]} · token {i} ‘{shown_token(e.tokens[i])}’ · "
                               f"{e.attributions[i]:+.5f}")
