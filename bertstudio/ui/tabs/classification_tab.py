"""Classification tab: one text, a text pair, or a batch (pasted lines or a CSV/TSV) -> label scores.

A batch's table sits beside the chosen row's bars, so it gets the results' full height; a CSV/TSV
is read in a worker (its columns when opened, its rows when run), never on the GUI thread.
Optionally a second model runs on the same input in the same job, side by side.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFileDialog, QLabel, QLayout, QPushButton, QTabWidget, QVBoxLayout, QWidget

from bertstudio.core.jobs import Outcome
from bertstudio.core.models import ModelInfo
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.classification import ClassificationBatchInput, ClassificationInput, lines_to_texts
from bertstudio.resources import examples
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.batch_table import BatchTable
from bertstudio.ui.widgets.compare_panel import CompareBars
from bertstudio.ui.widgets.elided_label import ElidedLabel
from bertstudio.ui.widgets.forms import browse_button, text_box
from bertstudio.ui.widgets.layouts import row, splitter
from bertstudio.workers.runner import TaskRunner

PAIR_SEPARATOR = " ||| "
KINDS = {
    "single-label": "Single-label (softmax): the probabilities sum to 1.",
    "multi-label": "Multi-label (sigmoid): each label's probability on its own.",
    "regression": "Regression head: one predicted value.",
}


def columns_job(path: str, control: TaskControl) -> list[str]:
    """Worker side of "Open CSV/TSV…": the header (reading the file may take a while)."""
    from bertstudio.core.tasks.classification import table_columns

    return table_columns(path)


def _page(*widgets: QWidget, last: QLayout | None = None) -> QWidget:
    """One page of the input tabs: the widgets one under the other, then the `last` row."""
    page = QWidget()
    layout = QVBoxLayout(page)
    layout.setContentsMargins(4, 4, 4, 4)
    for widget in widgets:
        layout.addWidget(widget)
    if last is not None:
        layout.addLayout(last)
    return page


class ClassificationTab(TaskTab):
    SPEC_KEY = "classification"
    ONNX_RUNTIME = True  # its runs are whole forwards: an exported model may run them (ONNX Runtime)
    # the workspace binds these by name, in this order (an opened file after the typed lines it replaces)
    BOUND = {"text": "text", "pair": "pair", "lines": "typed_lines", "file": "table_file",
             "column": "table_column", "mode": "mode"}
    RUN_LABEL = "Classify"

    def build_inputs(self, box: QVBoxLayout) -> None:
        self.table_path: str | None = None
        self.text = text_box("Type or paste a text to classify…", 64)
        self.pair = text_box("Optional text B, for sentence-pair models (e.g. is B a paraphrase of A?)", 64)
        self.modes = QTabWidget()
        self.modes.addTab(_page(QLabel("Text (A):"), self.text, QLabel("Text B (optional):"), self.pair), "Text / pair")
        self.modes.addTab(self._batch_page(), "Batch")
        self.modes.setMaximumHeight(200)
        self.kind_label = ElidedLabel()  # eight long label names never widen the window
        box.addWidget(self.modes)
        box.addWidget(self.kind_label)

    def _batch_page(self) -> QWidget:
        """Typed lines, or an opened CSV/TSV and the column that holds the texts."""
        self.lines = text_box("One text per line, or open a CSV/TSV file…", 110)
        self.lines.textChanged.connect(self._lines_edited)
        self.open_table = browse_button(self.open_table_file, "Open a table of texts", "Tables (*.csv *.tsv *.txt)",
                                        text="Open CSV/TSV…")
        self.column = QComboBox()
        self.column.setToolTip("The column that holds the texts")
        self.column.setEnabled(False)
        self.table_label = ElidedLabel()  # a long file name never widens the window
        self.file_runner = TaskRunner(self)  # reads a chosen file's columns off the GUI thread
        self.file_runner.result.connect(self._columns_read)
        self.file_runner.error.connect(self._on_error)
        self.export_button = QPushButton("Export CSV…")  # here, not under the table: the table keeps 10 rows
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self._choose_export)
        file_row = row(self.open_table, "column:", self.column, self.table_label, stretch=None)
        file_row.addWidget(self.export_button)
        return _page(self.lines, last=file_row)

    def build_results(self, box: QVBoxLayout) -> None:
        self.table = BatchTable()
        self.table.currentCellChanged.connect(lambda row, *_: self._show_row(row))
        self.bars = CompareBars()
        self.table_side = QWidget()
        side = QVBoxLayout(self.table_side)
        side.setContentsMargins(0, 0, 0, 0)
        side.addWidget(self.table, 1)
        self.results_split = splitter(Qt.Orientation.Horizontal, self.table_side, self.bars)
        self.results_split.setStretchFactor(0, 3)
        self.results_split.setStretchFactor(1, 2)
        self.table_side.setVisible(False)
        box.addWidget(self.results_split, 1)

    # -- input -----------------------------------------------------------------------------
    def model_loaded(self, info: ModelInfo) -> None:
        labels = ", ".join(info.id2label[i] for i in sorted(info.id2label)[:8])
        more = f" +{len(info.id2label) - 8} more" if len(info.id2label) > 8 else ""
        self.kind_label.setText(f"Labels: {labels}{more}" if labels else "")

    def examples(self) -> list[tuple[str, Any]]:
        found = []
        for line in examples("classification"):
            first, _, second = line.partition(PAIR_SEPARATOR)
            found.append((line, ClassificationInput(first, second or None)))
        return found

    def open_table_file(self, path: str) -> None:
        """Use a CSV/TSV as the batch input; its columns are read in a worker, then the user chooses one."""
        self.table_label.setText(f"reading {Path(path).name}…")
        self.file_runner.start(columns_job, path)
        self._opening = path

    def _columns_read(self, columns: list[str]) -> None:
        self.table_path = self._opening
        self.column.clear()
        self.column.addItems(columns)
        self.column.setCurrentText("text" if "text" in columns else columns[0])
        self.column.setEnabled(True)
        self.table_label.setText(Path(self.table_path).name)
        self.modes.setCurrentIndex(1)
        self.lines.blockSignals(True)
        self.lines.clear()
        self.lines.blockSignals(False)

    def _lines_edited(self) -> None:
        """Typing lines replaces an opened file as the batch input."""
        if self.table_path is not None and self.lines.toPlainText():
            self._forget_table()

    def _forget_table(self) -> None:
        self.table_path = None
        self.column.clear()
        self.column.setEnabled(False)
        self.table_label.setText("")

    def inputs(self) -> ClassificationInput | ClassificationBatchInput:
        if self.modes.currentIndex() == 0:
            return ClassificationInput(self.text.toPlainText(), self.pair.toPlainText() or None)
        if self.table_path is not None:  # read in the job's worker
            return ClassificationBatchInput(path=self.table_path, column=self.column.currentText() or None)
        return ClassificationBatchInput(tuple(lines_to_texts(self.lines.toPlainText())))

    def set_inputs(self, inputs: ClassificationInput | ClassificationBatchInput) -> None:
        if isinstance(inputs, ClassificationInput):
            self.modes.setCurrentIndex(0)
            self.text.setPlainText(inputs.text)
            self.pair.setPlainText(inputs.pair or "")
            return
        self.modes.setCurrentIndex(1)
        if inputs.path is not None:
            self.table_path = self._opening = inputs.path
            self.column.clear()
            self.column.addItems([inputs.column] if inputs.column else [])
            self.column.setEnabled(bool(inputs.column))
            self.table_label.setText(Path(inputs.path).name)
        else:
            self.lines.setPlainText("\n".join(inputs.texts))

    # -- values bound by name (BOUND): what the workspace keeps besides the plain text boxes --------
    @property
    def mode(self) -> str:
        return "batch" if self.modes.currentIndex() else "single"

    @mode.setter
    def mode(self, mode: str) -> None:
        self.modes.setCurrentIndex(1 if mode == "batch" else 0)

    @property
    def typed_lines(self) -> str:
        """The batch's typed lines ("" while an opened file is the batch)."""
        return "" if self.table_path else self.lines.toPlainText()

    @typed_lines.setter
    def typed_lines(self, text: str) -> None:
        if isinstance(text, str):
            self.lines.setPlainText(text)

    @property
    def table_file(self) -> str:
        return self.table_path or ""

    @table_file.setter
    def table_file(self, path: str) -> None:
        """An opened CSV/TSV comes back as the batch (its columns are read again when it runs)."""
        if isinstance(path, str) and path:
            mode = self.mode
            self.set_inputs(ClassificationBatchInput(path=path))
            self.mode = mode
        elif self.table_path is not None:
            self._forget_table()

    @property
    def table_column(self) -> str:
        return self.column.currentText() if self.table_path else ""

    @table_column.setter
    def table_column(self, column: str) -> None:
        if self.table_path and isinstance(column, str) and column:
            self.column.clear()
            self.column.addItems([column])
            self.column.setEnabled(True)

    # -- output ----------------------------------------------------------------------------
    def clear_result(self) -> None:
        self.table.setRowCount(0)
        self.table_side.setVisible(False)
        self.export_button.setEnabled(False)
        self.bars.show_one([], [])

    def show_outcome(self, outcome: Outcome) -> None:
        result = outcome.result
        regression = result.kind == "regression"
        second = outcome.second  # its own scale: a regression score beside a classifier's probabilities
        self.bars.set_regression(regression, None if second is None else second.kind == "regression")
        self.kind_label.setText(KINDS[result.kind])
        self.table_side.setVisible(result.batch)
        if result.batch:
            self.table.show_outcome(outcome)
            self.export_button.setEnabled(True)
            self.table.selectRow(0)
        self._show_row(0)
        top = result.first.top
        self.status.emit(f"Classification: {len(result.rows)} row(s); first: {top.label} {top.score:.3f}")

    def _show_row(self, table_row: int) -> None:
        outcome = self.outcome
        if outcome is None or table_row < 0:
            return
        index = self.table.result_index(table_row) if outcome.result.batch else 0
        row = outcome.result.rows[index]
        labels, values = [s.label for s in row.scores], [s.score for s in row.scores]
        if outcome.second is None:
            self.bars.show_one(labels, values, [f"{s.label}: {s.score:.6f}" for s in row.scores])
            return
        other = outcome.second.rows[index]
        self.bars.show_two(
            self.source_a(outcome), outcome.second_source,
            (labels, values), ([s.label for s in other.scores], [s.score for s in other.scores]),
            outcome.diff[index],
        )

    def _choose_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export results", self.settings.save_path("classification.csv"),
                                              "CSV (*.csv)")
        self.settings.remember_save(path)
        if path:
            self.export_to(path)

    def export_to(self, path: str) -> None:
        from bertstudio.core.errors import BertStudioError
        from bertstudio.core.tasks.classification import export_csv

        if self.outcome is None:
            return
        try:
            export_csv(self.outcome.result, path)
        except BertStudioError as error:
            self.show_message(str(error), error=True)
            return
        self.status.emit(f"Exported {len(self.outcome.result.rows)} rows to {path}")
