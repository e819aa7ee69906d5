"""Evaluate's Erase page: remove a concept from one layer with LEACE (core/features/erase.py) and see
what a linear probe and the model lose: the probe's held-out accuracy before and after (beside the
majority class, what a probe that learnt nothing scores) and, on the tab's labelled file, the task's
metrics intact and with the concept erased in the forward pass (the Compare page shows both)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QTableWidgetItem, QVBoxLayout, QWidget

from bertstudio.ui.widgets.forms import browse_button, read_only_table, spin_box
from bertstudio.ui.widgets.layouts import row


class ErasePage(QWidget):
    erase_requested = Signal(int, str, str)  # layer, concept file, positions ("all" or "first")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.erasure: Any = None
        self.layer = spin_box(0, 0, tip="The hidden state the concept is erased from: 0 = the embeddings, 1..layers")
        self.concept = QLineEdit()
        self.concept.setPlaceholderText("A table with text,concept columns (CSV/TSV/JSONL)")
        self.positions = QComboBox()
        self.positions.addItem("every token", "all")
        self.positions.addItem("first token ([CLS])", "first")
        self.positions.setToolTip("Fit and erase at every token, or only at the first token, where a classifier reads")
        self.erase_button = QPushButton("Erase")
        self.erase_button.setToolTip("Fit LEACE on the concept file's states; score the data file intact and erased")
        self.erase_button.clicked.connect(
            lambda: self.erase_requested.emit(self.layer.value(), self.concept.text().strip(),
                                              str(self.positions.currentData())))
        self.status = QLabel("Choose a layer and a concept file. With a data file above, the task is scored "
                             "intact and with the concept erased.")
        self.status.setWordWrap(True)
        self.table = read_only_table(["", "before", "after erasure"], stretch=(1, 2), rows=False)
        browse = browse_button(self.concept, "Concept file", "Tables (*.csv *.tsv *.jsonl);;All files (*)")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(row("Layer", self.layer, "Concept", self.concept, browse, self.positions, self.erase_button,
                              stretch=self.concept))
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)

    def set_layers(self, levels: int) -> None:
        self.layer.setRange(0, max(0, levels))

    def show_erasure(self, erasure: Any) -> None:
        self.erasure = erasure
        rows = [("probe accuracy (held-out tokens)", erasure.probe_accuracy_before, erasure.probe_accuracy_after),
                ("majority class", erasure.majority, erasure.majority)]
        comparison = erasure.comparison
        if comparison is not None:
            for name, value in comparison.a.metrics.items():
                rows.append((f"{name} ({comparison.a.n} rows)", value, comparison.b.metrics.get(name, float("nan"))))
        self.table.setRowCount(len(rows))
        for number, (name, before, after) in enumerate(rows):
            for column, text in enumerate((name, f"{before:.4f}", f"{after:.4f}")):
                self.table.setItem(number, column, QTableWidgetItem(text))
        where = "the first token" if erasure.positions == "first" else "every token"
        changed = (f" {len(comparison.disagreements)} of {comparison.a.n} predictions changed; the Compare page shows "
                   "them." if comparison is not None else " Choose a data file above to see what the task loses.")
        self.status.setText(f"{' / '.join(erasure.classes)} erased at layer {erasure.layer} ({where}, "
                            f"{erasure.tokens:,} states of {erasure.texts} texts).{changed}")

    def clear(self) -> None:
        self.erasure = None
        self.table.setRowCount(0)
