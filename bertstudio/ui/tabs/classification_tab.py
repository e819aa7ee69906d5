"""Classification tab: one text, a text pair, or a batch (pasted lines or a CSV/TSV) -> label scores.

Optionally a second model runs on the same input in the same worker job, and the results are
shown side by side with the differences marked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.jobs import Outcome
from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.core.progress import TaskControl
from bertstudio.resources import examples
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.compare_panel import CompareBars, CompareSource

PAIR_SEPARATOR = " ||| "


def _run(loaded: Any, text: str | None, pair: str | None, texts: list[str] | None, control: TaskControl) -> Any:
    from bertstudio.core.tasks.classification import classify, classify_batch

    if texts is not None:
        return classify_batch(loaded, texts, control)
    return classify(loaded, text or "", pair)


def classification_job(
    request: LoadRequest,
    text: str | None,
    pair: str | None,
    texts: list[str] | None,
    table: tuple[str, str | None] | None,
    compare_source: str | None,
    control: TaskControl,
) -> Outcome:
    """Read the table if any, classify; then the same with the second model (diff: one RankingDiff per row)."""
    from bertstudio.core.jobs import run_task
    from bertstudio.core.tasks.classification import compare, read_texts

    if table is not None:
        texts = read_texts(table[0], table[1])
    return run_task(request, control, lambda loaded: _run(loaded, text, pair, texts, control), compare_source, compare)


class NumberItem(QTableWidgetItem):
    """A cell that sorts by its number, not its text."""

    def __init__(self, value: float, text: str) -> None:
        super().__init__(text)
        self.setData(Qt.ItemDataRole.UserRole, value)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        mine, theirs = self.data(Qt.ItemDataRole.UserRole), other.data(Qt.ItemDataRole.UserRole)
        if isinstance(mine, float | int) and isinstance(theirs, float | int):
            return mine < theirs
        return super().__lt__(other)


class ClassificationTab(TaskTab):
    TASK = "classification"
    TITLE = "Classification"
    ORDER = 60

    def build(self) -> None:
        self.outcome: Outcome | None = None
        self.table_path: str | None = None
        self.modes = QTabWidget()

        single = QWidget()
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText("Type or paste a text to classify…")
        self.pair = QPlainTextEdit()
        self.pair.setPlaceholderText("Optional text B, for sentence-pair models (e.g. is B a paraphrase of A?)")
        for edit in (self.text, self.pair):
            edit.setMaximumHeight(80)
        self.examples = QComboBox()
        self.examples.addItem("Examples…")
        for line in examples("classification"):
            self.examples.addItem(line, line)
        self.examples.activated.connect(self._example_chosen)
        single_layout = QVBoxLayout(single)
        single_layout.addWidget(QLabel("Text (A):"))
        single_layout.addWidget(self.text)
        single_layout.addWidget(QLabel("Text B (optional):"))
        single_layout.addWidget(self.pair)
        single_layout.addWidget(self.examples)
        single_layout.addStretch(1)

        batch = QWidget()
        self.lines = QPlainTextEdit()
        self.lines.setPlaceholderText("One text per line, or open a CSV/TSV file…")
        self.lines.setMaximumHeight(110)
        self.lines.textChanged.connect(self._lines_edited)
        self.open_table = QPushButton("Open CSV/TSV…")
        self.open_table.clicked.connect(self._choose_table)
        self.column = QComboBox()
        self.column.setToolTip("The column that holds the texts")
        self.column.setEnabled(False)
        self.table_label = QLabel()
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self._choose_export)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["text", "label", "score"])
        self.table.setSortingEnabled(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.currentCellChanged.connect(lambda row, *_: self._show_row(row))
        file_row = QHBoxLayout()
        for widget in (self.open_table, QLabel("column:"), self.column, self.table_label):
            file_row.addWidget(widget)
        file_row.addStretch(1)
        file_row.addWidget(self.export_button)
        batch_layout = QVBoxLayout(batch)
        batch_layout.addWidget(self.lines)
        batch_layout.addLayout(file_row)
        batch_layout.addWidget(self.table, 1)

        self.modes.addTab(single, "Text / pair")
        self.modes.addTab(batch, "Batch")
        self.compare_source = CompareSource(self.model_bar.source)
        self.run_button = QPushButton("Classify")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda: self.runner.cancel())
        self.kind_label = QLabel()
        self.bars = CompareBars()
        controls = QHBoxLayout()
        controls.addWidget(self.compare_source, 1)
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)
        self.body.addWidget(self.modes, 1)
        self.body.addLayout(controls)
        self.body.addWidget(self.kind_label)
        self.body.addWidget(self.bars, 2)

        self.runner.started.connect(lambda: self.cancel_button.setEnabled(True))
        self.runner.finished.connect(lambda: self.cancel_button.setEnabled(False))
        self.runner.result.connect(self.show_result)
        self.runner.progress.connect(lambda event: self.status.emit(event.message))
        self.runner.cancelled.connect(lambda: self.show_message("Cancelled."))

    # -- input -----------------------------------------------------------------------------
    def model_loaded(self, info: ModelInfo) -> None:
        labels = ", ".join(info.id2label[i] for i in sorted(info.id2label)[:8])
        more = f" +{len(info.id2label) - 8} more" if len(info.id2label) > 8 else ""
        self.kind_label.setText(f"Labels: {labels}{more}" if labels else "")

    def _example_chosen(self, index: int) -> None:
        line = self.examples.itemData(index)
        if line:
            first, _, second = line.partition(PAIR_SEPARATOR)
            self.text.setPlainText(first)
            self.pair.setPlainText(second)
        self.examples.setCurrentIndex(0)

    def _choose_table(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a table of texts", "", "Tables (*.csv *.tsv *.txt)")
        if path:
            self.open_table_file(path)

    def open_table_file(self, path: str) -> None:
        """Use a CSV/TSV as the batch input; the user chooses the text column."""
        from bertstudio.core.errors import BertStudioError
        from bertstudio.core.tasks.classification import table_columns

        try:
            columns = table_columns(path)
        except BertStudioError as error:
            self.show_message(str(error), error=True)
            return
        self.table_path = path
        self.column.clear()
        self.column.addItems(columns)
        self.column.setCurrentText("text" if "text" in columns else columns[0])
        self.column.setEnabled(True)
        self.table_label.setText(Path(path).name)
        self.modes.setCurrentIndex(1)
        self.lines.blockSignals(True)
        self.lines.clear()
        self.lines.blockSignals(False)

    def _lines_edited(self) -> None:
        """Typing lines replaces an opened file as the batch input."""
        if self.table_path is not None and self.lines.toPlainText():
            self.table_path = None
            self.column.clear()
            self.column.setEnabled(False)
            self.table_label.setText("")

    def run(self) -> None:
        from bertstudio.core.tasks.classification import lines_to_texts

        compare_source = self.compare_source.source()
        if self.compare_source.enabled.isChecked() and not compare_source:
            self.show_message("Choose the second model to compare with, or untick “Compare with…”.", error=True)
            return
        if self.modes.currentIndex() == 0:
            self.run_job(classification_job, self.text.toPlainText(), self.pair.toPlainText() or None, None, None,
                         compare_source)
        elif self.table_path is not None:
            table = (self.table_path, self.column.currentText() or None)
            self.run_job(classification_job, None, None, None, table, compare_source)
        else:
            self.run_job(classification_job, None, None, lines_to_texts(self.lines.toPlainText()), None,
                         compare_source)

    # -- output ----------------------------------------------------------------------------
    def show_result(self, outcome: Outcome) -> None:
        self.outcome = outcome
        result = outcome.result
        regression = result.kind == "regression"
        self.bars.set_value_format("{:.4g}" if regression else "{:.1%}", "value" if regression else "probability")
        self.kind_label.setText({
            "single-label": "Single-label (softmax): the probabilities sum to 1.",
            "multi-label": "Multi-label (sigmoid): each label's probability on its own.",
            "regression": "Regression head: one predicted value.",
        }[result.kind])
        if result.batch:
            self._fill_table()
            self.export_button.setEnabled(True)
            self.table.selectRow(0)
        self._show_row(0)
        self.show_message("\n".join(n.text for n in outcome.notes))
        top = result.first.top
        self.status.emit(f"Classification: {len(result.rows)} row(s); first: {top.label} {top.score:.3f}")

    def _fill_table(self) -> None:
        outcome = self.outcome
        assert outcome is not None
        comparing = outcome.second is not None
        headers = ["text", "label", "score"] + (["label B", "score B", "changed"] if comparing else [])
        self.table.setSortingEnabled(False)
        self.table.clear()
        self.table.setColumnCount(len(headers))
        self.table.setHorizontalHeaderLabels(headers)
        self.table.setRowCount(len(outcome.result.rows))
        for index, row in enumerate(outcome.result.rows):
            text = QTableWidgetItem(row.text + (" ✂" if row.truncated else ""))
            text.setData(Qt.ItemDataRole.UserRole + 1, index)  # the row's place in the result
            text.setToolTip(row.text)
            cells = [text, QTableWidgetItem(row.top.label), NumberItem(row.top.score, f"{row.top.score:.4f}")]
            if comparing:
                other = outcome.second.rows[index]
                diff = outcome.diff[index]
                cells += [QTableWidgetItem(other.top.label), NumberItem(other.top.score, f"{other.top.score:.4f}"),
                          QTableWidgetItem("top-1 changed" if diff.top_changed else "")]
            for column, cell in enumerate(cells):
                self.table.setItem(index, column, cell)
        self.table.setSortingEnabled(True)

    def _result_index(self, table_row: int) -> int:
        item = self.table.item(table_row, 0)
        value = item.data(Qt.ItemDataRole.UserRole + 1) if item is not None else None
        return int(value) if value is not None else 0

    def _show_row(self, table_row: int) -> None:
        outcome = self.outcome
        if outcome is None or table_row < 0:
            return
        index = self._result_index(table_row) if outcome.result.batch else 0
        row = outcome.result.rows[index]
        labels, values = [s.label for s in row.scores], [s.score for s in row.scores]
        if outcome.second is None:
            self.bars.show_one(labels, values, [f"{s.label}: {s.score:.6f}" for s in row.scores])
            return
        other = outcome.second.rows[index]
        self.bars.show_two(
            self.model_request().source if self.model_request() else "A", outcome.second_source,
            (labels, values), ([s.label for s in other.scores], [s.score for s in other.scores]),
            outcome.diff[index],
        )

    def _choose_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export results", "classification.csv", "CSV (*.csv)")
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
