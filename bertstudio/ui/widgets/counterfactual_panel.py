"""What would flip this? The counterfactual search (core/whatif) for one task tab's input.

Method, most edits, the masked LM that proposes words; Find runs the search in a worker (progress,
Cancel or Esc); the results, fewest edits first, each with its prediction and "Open in editor"
(the tab takes the edited input and runs it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QLineEdit, QPushButton, QVBoxLayout, QWidget

from bertstudio.core.errors import BertStudioError
from bertstudio.core.models import LoadRequest
from bertstudio.core.notes import Note
from bertstudio.ui.tabs.frame import error_note
from bertstudio.ui.tabs.run_lifecycle import JobDialog, RunLifecycle
from bertstudio.ui.widgets.forms import read_only_table, set_cells, spin_box
from bertstudio.ui.widgets.layouts import row
from bertstudio.ui.widgets.notes_area import NotesArea
from bertstudio.ui.widgets.run_controls import ProgressLine
from bertstudio.workers.runner import TaskRunner

METHODS = (("mlm", "Masked-LM substitution"), ("hotflip", "HotFlip (gradient-guided)"), ("ablation", "Removal"))
COLUMNS = ("Edits", "Prediction", "Score", "Edited input", "")


class CounterfactualPanel(JobDialog):
    """`source()` gives (LoadRequest or None, the tab's input; InputError when it cannot run)."""

    open_texts = Signal(object)  # the edited texts of one result (tuple of str)
    searched = Signal(str)  # a search's summary, for the status bar and the log

    def __init__(self, spec: Any, source: Callable[[], tuple[LoadRequest | None, Any]],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from bertstudio.core.whatif.search import MAX_EDITS

        self.spec, self.source = spec, source
        self.setWindowTitle(f"What would flip this? — {spec.title}")
        self.resize(820, 460)
        self.runner = TaskRunner(self)
        self.method = QComboBox()
        for key, label in METHODS:
            self.method.addItem(label, key)
        self.max_edits = spin_box(1, MAX_EDITS, 2)
        self.mlm = QLineEdit()
        self.mlm.setPlaceholderText("the model's own MLM head (or a masked LM with the same vocabulary)")
        self.method.currentIndexChanged.connect(lambda _i: self.mlm.setEnabled(self.method.currentData() == "mlm"))
        own_mlm = spec.counterfactual is not None and spec.counterfactual.masked_lm
        self.method.setCurrentIndex(self.method.findData("mlm" if own_mlm else "hotflip"))
        self.method.setToolTip("" if own_mlm else (
            "HotFlip by default: this task's model has no masked-LM head to propose words (Masked-LM "
            "substitution needs one with the same vocabulary, named below)"))
        form = QFormLayout()
        form.addRow("Method:", self.method)
        form.addRow("At most edits:", self.max_edits)
        form.addRow("Masked LM:", self.mlm)
        self.find_button = QPushButton("Find")
        self.find_button.setToolTip("Search (Ctrl+Enter)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Cancel (Esc)")
        self.cancel_button.setEnabled(False)
        self.progress = ProgressLine()
        self.notes = NotesArea(one_line=True)
        self.table = read_only_table(COLUMNS, stretch=(3,))
        self.table.cellDoubleClicked.connect(lambda row, _column: self.open_row(row))
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(row(self.find_button, self.cancel_button, self.progress, stretch=self.progress))
        layout.addWidget(self.table, 1)
        layout.addWidget(self.notes)
        self.results: tuple[Any, ...] = ()
        # Run/Cancel/progress/"Cancelled." as every tab has them; Esc is JobDialog's (closes when idle)
        self.lifecycle = RunLifecycle(self, self.runner, self.search, self.find_button, self.cancel_button,
                                      self.progress, self.notes, esc_cancels=False)
        self.runner.result.connect(self.show_result)
        self.runner.error.connect(lambda error: self.notes.set_notes([error_note(error)]))

    def search(self) -> None:
        from bertstudio.core.whatif.search import options
        from bertstudio.workers.jobs import counterfactual_job

        try:
            request, inputs = self.source()
            if request is None:
                raise BertStudioError("Load a model first.")
            chosen = options(self.method.currentData(), self.max_edits.value(), 8, mlm=self.mlm.text())
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        self.table.setRowCount(0)
        self.runner.start(counterfactual_job, self.spec, request, inputs, chosen)

    def cancel(self) -> None:
        self.lifecycle.cancel()

    def show_result(self, result: Any) -> None:
        self.results = result.counterfactuals
        self.table.setRowCount(len(self.results))
        edits = [", ".join(describe_edit(e, len(found.texts)) for e in found.edits) for found in self.results]
        for index, found in enumerate(self.results):
            cells = (edits[index], found.prediction.label, f"{found.prediction.score:.3f}", " | ".join(found.texts))
            set_cells(self.table, index, cells)
            button = QPushButton("Open in editor")
            button.setToolTip("Put this edited input in the tab and run it")
            button.clicked.connect(lambda _checked=False, at=index: self.open_row(at))
            self.table.setCellWidget(index, 4, button)
        original = result.original
        head = Note("info", f"Original: {original.label} ({original.score:.3f}); {len(self.results)} "
                    f"counterfactual(s) from {result.evaluated:,} edited inputs ({result.method}).")
        self.notes.set_notes([head, *result.notes])
        best = f"; fewest edits: {edits[0]} -> {self.results[0].prediction.label}" if self.results else ""
        self.searched.emit(f"What would flip this? {head.text}{best}")  # into the window's log (issue 29 #19)

    def open_row(self, row: int) -> None:
        if 0 <= row < len(self.results):
            self.open_texts.emit(self.results[row].texts)


def describe_edit(edit: Any, parts: int) -> str:
    """'#3 C → N': the word's place says which of two equal words changed ("C → N, C → N" read the
    same); with two texts, 'B#3' is the third word of the second."""
    where = f"{'AB'[edit.word.part] if parts > 1 else ''}#{edit.word.index + 1}"
    return f"{where} {edit.word.text} → {edit.new}" if edit.new else f"{where} −{edit.word.text}"
