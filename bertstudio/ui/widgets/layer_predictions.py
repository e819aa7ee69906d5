"""Per-layer predictions at a mask: layers down, top-k across, each cell shaded by its probability.

Reading down a column shows at which layer the final answer appears (core/tasks/fill_mask/layers.py).
With a tuned lens chosen (a folder from `bertstudio features lens` or the Features tab's Train page),
the tuned lens's table stands beside the logit lens's, each with the KL divergence of every layer's
distribution from the last layer's (lower: closer to the answer).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from bertstudio.ui.plot_style import format_probability
from bertstudio.ui.widgets.layouts import bar_above, column, row, splitter


def _table() -> QTableWidget:
    table = QTableWidget(0, 0)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
    return table


class LayerPredictionsView(QWidget):
    lens_changed = Signal(str)  # the tuned-lens folder chosen ("" when cleared)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.predictions: Any = None
        self.mask_combo = QComboBox()
        self.mask_combo.currentIndexChanged.connect(self._redraw)
        self.note = QLabel("Fill-mask models: the model's own MLM head read at every layer.")
        self.note.setWordWrap(True)
        self.lens = QLineEdit()
        self.lens.setPlaceholderText("Tuned lens folder (optional): read beside the logit lens")
        self.lens.editingFinished.connect(lambda: self.lens_changed.emit(self.lens_path()))
        browse = QPushButton("Open…")
        browse.clicked.connect(self._browse)
        clear = QPushButton("Clear")
        clear.clicked.connect(self._clear_lens)
        self.table = _table()
        self.tuned_table = _table()
        self.logit_title = QLabel("Logit lens")
        self.tuned_title = QLabel("Tuned lens")
        self.tuned_side = column(self.tuned_title, self.tuned_table)
        self.tuned_side.setVisible(False)
        self.logit_title.setVisible(False)
        layout = bar_above(self, row(QLabel("Mask:"), self.mask_combo, self.note),
                           splitter(Qt.Orientation.Horizontal, column(self.logit_title, self.table), self.tuned_side))
        layout.insertLayout(1, row(QLabel("Tuned lens:"), self.lens, browse, clear, stretch=1))

    def lens_path(self) -> str:
        return self.lens.text().strip()

    def set_lens(self, path: str) -> None:
        self.lens.setText(path)
        self.lens_changed.emit(self.lens_path())

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Tuned lens folder", self.lens_path())
        if folder:
            self.set_lens(folder)

    def _clear_lens(self) -> None:
        if self.lens_path():
            self.set_lens("")

    def clear(self) -> None:
        self.predictions = None
        self.mask_combo.clear()
        for table in (self.table, self.tuned_table):
            table.clear()
            table.setRowCount(0)
            table.setColumnCount(0)

    def show_predictions(self, predictions: Any) -> None:
        self.predictions = predictions
        with QSignalBlocker(self.mask_combo):
            self.mask_combo.clear()
            for number in range(len(predictions.masks)):
                self.mask_combo.addItem(f"mask {number + 1}", number)
        if predictions.notes:
            self.note.setText(" ".join(note.text for note in predictions.notes))
        self._redraw()

    def cell(self, layer: int, rank: int) -> str:
        return _text(self.table.item(layer, rank))

    def tuned_cell(self, layer: int, rank: int) -> str:
        return _text(self.tuned_table.item(layer, rank))

    def _redraw(self, *_args: Any) -> None:
        p = self.predictions
        if p is None:
            return
        number = max(0, self.mask_combo.currentIndex())
        tuned = bool(getattr(p, "tuned", ()))
        self.tuned_side.setVisible(tuned)
        self.logit_title.setVisible(tuned)
        _fill(self.table, p.layers, getattr(p, "kl", ()), number)
        if tuned:
            _fill(self.tuned_table, p.tuned, p.tuned_kl, number)


def _text(item: QTableWidgetItem | None) -> str:
    return item.text() if item is not None else ""


def _fill(table: QTableWidget, layers: Any, kl: Any, number: int) -> None:
    """Layers down, the top-k across, and the KL to the last layer in the last column (where known)."""
    k = len(layers[0][number]) if layers else 0
    with_kl = bool(kl)
    table.setRowCount(len(layers))
    table.setColumnCount(k + (1 if with_kl else 0))
    table.setHorizontalHeaderLabels([f"top {i + 1}" for i in range(k)] + (["KL"] if with_kl else []))
    table.setVerticalHeaderLabels(["embeddings"] + [f"layer {i}" for i in range(1, len(layers))])
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
            table.setItem(layer, rank, item)
        if with_kl:
            value = QTableWidgetItem(f"{kl[layer][number]:.3f}")
            value.setToolTip("KL divergence of this layer's distribution from the last layer's (nats)")
            value.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            table.setItem(layer, k, value)
