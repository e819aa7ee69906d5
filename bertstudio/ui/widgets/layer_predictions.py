"""Per-layer predictions at a mask: layers down, top-k across, each cell shaded by its probability.

Reading down a column shows at which layer the final answer appears (core/tasks/fill_mask/layers.py).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from bertstudio.ui.plot_style import format_probability
from bertstudio.ui.widgets.layouts import bar_above, tool_bar


class LayerPredictionsView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.predictions: Any = None
        self.mask = QComboBox()
        self.mask.currentIndexChanged.connect(self._redraw)
        self.note = QLabel("Fill-mask models: the model's own MLM head read at every layer.")
        self.note.setWordWrap(True)
        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        bar_above(self, tool_bar(QLabel("Mask:"), self.mask, status=self.note), self.table)

    def clear(self) -> None:
        self.predictions = None
        self.mask.clear()
        self.table.clear()
        self.table.setRowCount(0)
        self.table.setColumnCount(0)

    def show_predictions(self, predictions: Any) -> None:
        self.predictions = predictions
        self.mask.blockSignals(True)
        self.mask.clear()
        for number in range(len(predictions.masks)):
            self.mask.addItem(f"mask {number + 1}", number)
        self.mask.blockSignals(False)
        if predictions.notes:
            self.note.setText(predictions.notes[0].text)
        self._redraw()

    def cell(self, layer: int, rank: int) -> str:
        return self.table.item(layer, rank).text() if self.table.item(layer, rank) else ""

    def _redraw(self, *_args: Any) -> None:
        p = self.predictions
        if p is None:
            return
        number = max(0, self.mask.currentIndex())
        layers = p.layers
        k = len(layers[0][number]) if layers else 0
        self.table.setRowCount(len(layers))
        self.table.setColumnCount(k)
        self.table.setHorizontalHeaderLabels([f"top {i + 1}" for i in range(k)])
        self.table.setVerticalHeaderLabels(["embeddings"] + [f"layer {i}" for i in range(1, len(layers))])
        final = {c.token_id for c in layers[-1][number][:1]}
        for layer, per_mask in enumerate(layers):
            for rank, candidate in enumerate(per_mask[number]):
                item = QTableWidgetItem(f"{candidate.token.strip()}  {format_probability(candidate.score)}")
                shade = QColor(33, 81, 219)
                shade.setAlphaF(min(1.0, 0.1 + 0.9 * candidate.score))
                item.setBackground(shade)
                if candidate.score > 0.5:
                    item.setForeground(QColor("white"))
                if candidate.token_id in final:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                item.setToolTip(f"id {candidate.token_id}: p = {candidate.score:.4f}")
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                self.table.setItem(layer, rank, item)
