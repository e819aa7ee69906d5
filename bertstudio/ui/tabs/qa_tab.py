"""Extractive QA tab: ask a question of a context, see the best span highlighted and why it won."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
)

from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.qa import QAOptions, QAResult
from bertstudio.resources import examples
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.qa_context import QAContextEdit
from bertstudio.ui.widgets.qa_scores_plot import QAScoresPlot

EXAMPLE_SEPARATOR = "|||"


def qa_job(request: LoadRequest, question: str, context: str, options: QAOptions, control: TaskControl) -> QAResult:
    from bertstudio.core.models import load_model
    from bertstudio.core.tasks.qa import answer

    loaded = load_model(request, control)
    control.check()
    return answer(loaded, question, context, options, control)


def _spin(low: int, high: int, value: int, prefix: str, tip: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setValue(value)
    spin.setPrefix(prefix)
    spin.setToolTip(tip)
    return spin


class QATab(TaskTab):
    TASK = "qa"
    TITLE = "Question answering"
    ORDER = 40

    def build(self) -> None:
        self.result: QAResult | None = None
        defaults = QAOptions()
        self.question = QLineEdit()
        self.question.setPlaceholderText("Ask a question whose answer is a piece of the context…")
        self.question.returnPressed.connect(self.run)
        self.context = QAContextEdit()
        self.context.setPlaceholderText("Paste the context: the text that holds the answer (any length).")
        self.examples = QComboBox()
        self.examples.addItem("Examples…")
        for line in examples("qa"):
            question, _, context = line.partition(EXAMPLE_SEPARATOR)
            self.examples.addItem(question.strip(), (question.strip(), context.strip()))
        self.examples.activated.connect(self._example_chosen)
        self.top_k = _spin(1, 50, 5, "top-k ", "How many spans to list")
        self.max_answer_len = _spin(1, 200, defaults.max_answer_len, "max answer ",
                                    "Longest answer, in tokens")
        self.max_answer_len.setSuffix(" tok")
        self.doc_stride = _spin(0, 1024, defaults.doc_stride, "doc stride ",
                                "Tokens shared by consecutive windows when the context is longer than the model reads")
        self.allow_null = QCheckBox("allow no answer")
        self.allow_null.setToolTip("SQuAD 2.0 models: the empty answer (scored at CLS) may win")
        self.threshold = QDoubleSpinBox()
        self.threshold.setRange(-1.0, 1.0)
        self.threshold.setDecimals(3)
        self.threshold.setSingleStep(0.05)
        self.threshold.setPrefix("threshold ")
        self.threshold.setToolTip("No answer wins only if its score minus this threshold beats the best span")
        self.threshold.setEnabled(False)
        self.allow_null.toggled.connect(self.threshold.setEnabled)
        self.run_button = QPushButton("Answer")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda: self.runner.cancel())
        QShortcut(QKeySequence("Ctrl+Return"), self, self.run)

        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["answer", "score", "start", "end"])
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.currentCellChanged.connect(lambda row, *_: self.show_answer(row))
        self.plot = QAScoresPlot()

        controls = QHBoxLayout()
        for widget in (self.examples, self.top_k, self.max_answer_len, self.doc_stride, self.allow_null,
                       self.threshold):
            controls.addWidget(widget)
        controls.addStretch(1)
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)
        self.body.addWidget(self.question)
        self.body.addLayout(controls)
        lower = QSplitter(Qt.Orientation.Horizontal)
        lower.addWidget(self.table)
        lower.addWidget(self.plot)
        lower.setSizes([300, 500])
        upper = QSplitter(Qt.Orientation.Vertical)
        upper.addWidget(self.context)
        upper.addWidget(lower)
        upper.setSizes([300, 260])
        self.body.addWidget(upper, 1)

        self.runner.started.connect(lambda: self.cancel_button.setEnabled(True))
        self.runner.finished.connect(lambda: self.cancel_button.setEnabled(False))
        self.runner.result.connect(self.show_result)
        self.runner.cancelled.connect(lambda: self.show_message("Cancelled."))

    # -- input -----------------------------------------------------------------------------
    def options(self) -> QAOptions:
        return QAOptions(
            top_k=self.top_k.value(),
            max_answer_len=self.max_answer_len.value(),
            doc_stride=self.doc_stride.value(),
            allow_no_answer=self.allow_null.isChecked(),
            null_threshold=self.threshold.value(),
        )

    def _example_chosen(self, index: int) -> None:
        pair = self.examples.itemData(index)
        if pair:
            self.question.setText(pair[0])
            self.context.setPlainText(pair[1])
        self.examples.setCurrentIndex(0)

    def model_loaded(self, info: ModelInfo) -> None:
        self.doc_stride.setToolTip(
            f"Tokens shared by consecutive windows; this model reads {info.max_length} tokens per window"
        )

    def run(self) -> None:
        self.run_job(qa_job, self.question.text(), self.context.toPlainText(), self.options())

    # -- output ----------------------------------------------------------------------------
    def show_result(self, result: QAResult) -> None:
        self.result = result
        self.table.blockSignals(True)
        self.table.setRowCount(len(result.answers))
        for row, item in enumerate(result.answers):
            text = item.answer if not item.is_null else "(no answer)"
            cells = [text, f"{item.score:.4f}", str(item.start), str(item.end)]
            for column, value in enumerate(cells):
                cell = QTableWidgetItem(value)
                if column:
                    cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if column == 0 and not item.is_null:
                    cell.setToolTip(f"from window {item.window + 1} of {len(result.windows)}")
                self.table.setItem(row, column, cell)
        self.table.blockSignals(False)
        self.plot.set_scores(result.tokens.tokens, result.tokens.start_scores, result.tokens.end_scores)
        if result.answers:
            self.table.selectRow(0)
            self.show_answer(0)
        notes = [*result.notes, result.head_warning]
        self.show_message("\n".join(n for n in notes if n))
        best = result.best
        summary = "no answer" if best is None or best.is_null else f"“{best.answer}” ({best.score:.1%})"
        self.status.emit(f"QA: {summary}")

    def show_answer(self, row: int) -> None:
        """Highlight answer `row` in the context and shade its tokens in the plot."""
        if self.result is None or not 0 <= row < len(self.result.answers):
            return
        item = self.result.answers[row]
        if self.context.toPlainText() != self.result.context:
            return  # the user edited the context since; the offsets no longer point at it
        if item.is_null:
            self.context.clear_highlights()
            self.plot.mark(-1, -1)
            return
        window = self.result.windows[item.window] if len(self.result.windows) > 1 else None
        self.context.show_span(item.start, item.end, window)
        covered = [i for i, (s, e) in enumerate(self.result.tokens.spans) if s < item.end and e > item.start]
        self.plot.mark(covered[0], covered[-1]) if covered else self.plot.mark(-1, -1)
