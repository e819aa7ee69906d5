"""Extractive QA tab: ask a question of a context, see the best span highlighted and why it won.

Optionally a second model ("Compare with…") reads the same question and context in the same
worker job: its best answer is highlighted in the context too (underlined, in B's colour), its
n-best table sits beside A's with each span's rank and score change against A, and a summary
says whether the best span changed, how much the two overlap and the score delta.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QTextCharFormat
from PySide6.QtWidgets import QCheckBox, QDoubleSpinBox, QLabel, QLineEdit, QTableWidgetItem, QVBoxLayout, QWidget

from bertstudio.core.jobs import Outcome
from bertstudio.core.models import ModelInfo
from bertstudio.core.tasks.qa import Answer, QAInput, QAOptions, QAResult
from bertstudio.core.tasks.qa.spans import SpanDiff
from bertstudio.resources import examples
from bertstudio.ui import theme
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.theme import ink_on
from bertstudio.ui.widgets.compare_panel import COLOR_B, short_source
from bertstudio.ui.widgets.forms import read_only_table, spin_box
from bertstudio.ui.widgets.layouts import splitter
from bertstudio.ui.widgets.qa_context import QAContextEdit
from bertstudio.ui.widgets.qa_scores_plot import QAScoresPlot

EXAMPLE_SEPARATOR = "|||"
B_BACKGROUND = QColor("#fbd9c4")  # model B's answer in the context (A's stays yellow, drawn on top)


def versus_a(item: Answer, result_a: QAResult) -> tuple[int | None, float | None]:
    """(rank in A's n-best, score B − A) of B's answer `item`; (None, None) if A did not list that span."""
    for rank, other in enumerate(result_a.answers, start=1):
        if other.is_null == item.is_null and (item.is_null or (other.start, other.end) == (item.start, item.end)):
            return rank, item.score - other.score
    return None, None


def span_summary(diff: SpanDiff) -> str:
    """Rich text: whether the best span changed, the overlap and the score delta."""
    def shown(span: tuple[int, int] | None, text: str) -> str:
        return "(no answer)" if span is None else f"“{html.escape(text)}” [{span[0]}:{span[1]}]"

    if diff.changed:
        head = (f"<b style='color:{theme.colors().error}'>Best span changed:</b> {shown(diff.span_a, diff.text_a)} → "
                f"{shown(diff.span_b, diff.text_b)}")
    else:
        head = f"Best span unchanged: {shown(diff.span_a, diff.text_a)}"
    parts = [head, f"overlap {diff.overlap:.0%}"]
    if diff.score_delta is not None:
        parts.append(f"score B − A {diff.score_delta:+.4f}")
    return " · ".join(parts)


class QATab(TaskTab):
    SPEC_KEY = "qa"
    BOUND = {"question": "question", "context": "context",  # the workspace binds these by name
             "options.top_k": "top_k", "options.max_answer_len": "max_answer_len",
             "options.doc_stride": "doc_stride", "options.allow_no_answer": "allow_null",
             "options.null_threshold": "threshold"}
    RUN_LABEL = "Answer"
    INPUT_SHARE = 0.3  # the context is where the answer is shown: it gets room too

    def build_inputs(self, box: QVBoxLayout) -> None:
        defaults = QAOptions()
        self.question = QLineEdit()
        self.question.setPlaceholderText("Ask a question whose answer is a piece of the context…")
        self.question.returnPressed.connect(self.run)
        self.context = QAContextEdit()
        self.context.setPlaceholderText("Paste the context: the text that holds the answer (any length).")
        self.top_k = spin_box(1, 50, 5, prefix="top-k ", tip="How many spans to list")
        self.max_answer_len = spin_box(1, 200, defaults.max_answer_len, prefix="max answer ",
                                       tip="Longest answer, in tokens")
        self.max_answer_len.setSuffix(" tok")
        self.doc_stride = spin_box(0, 1024, defaults.doc_stride, prefix="doc stride ",
                                   tip="Tokens shared by consecutive windows when the context is longer than the "
                                   "model reads")
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
        for widget in (self.top_k, self.max_answer_len, self.doc_stride, self.allow_null, self.threshold):
            self.options.addWidget(widget)
        box.addWidget(self.question)
        box.addWidget(self.context, 1)
        self.context.textChanged.connect(self._context_edited)

    def build_results(self, box: QVBoxLayout) -> None:
        self.b_span: tuple[int, int] | None = None  # B's answer shown in the context
        # the answer column takes the room; the numbers only what they need (two tables share a row)
        self.table = read_only_table(["answer", "score", "start", "end"])
        self.table.currentCellChanged.connect(lambda row, *_: self.show_answer(row))
        self.table_b = read_only_table(["answer", "score", "start", "end", "vs A"])
        self.table_b.currentCellChanged.connect(lambda row, *_: self.show_answer_b(row))
        self.plot = QAScoresPlot()
        self.title_a = QLabel()
        self.title_b = QLabel()
        self.compare_summary = QLabel()
        self.compare_summary.setWordWrap(True)
        self.compare_summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        side_a, self.side_b = QWidget(), QWidget()
        for side, title, table in ((side_a, self.title_a, self.table), (self.side_b, self.title_b, self.table_b)):
            column = QVBoxLayout(side)
            column.setContentsMargins(0, 0, 0, 0)
            column.addWidget(title)
            column.addWidget(table, 1)
        box.addWidget(splitter(Qt.Orientation.Horizontal, side_a, self.side_b, self.plot, sizes=(300, 300, 400)), 1)
        box.addWidget(self.compare_summary)
        self.title_a.setVisible(False)
        self.side_b.setVisible(False)
        self.compare_summary.setVisible(False)

    # -- input -----------------------------------------------------------------------------
    def qa_options(self) -> QAOptions:
        return QAOptions(
            top_k=self.top_k.value(),
            max_answer_len=self.max_answer_len.value(),
            doc_stride=self.doc_stride.value(),
            allow_no_answer=self.allow_null.isChecked(),
            null_threshold=self.threshold.value(),
        )

    def inputs(self) -> QAInput:
        return QAInput(self.question.text(), self.context.toPlainText(), self.qa_options())

    def set_inputs(self, inputs: QAInput) -> None:
        self.question.setText(inputs.question)
        self.context.setPlainText(inputs.context)
        options = inputs.options
        self.top_k.setValue(options.top_k)
        self.max_answer_len.setValue(options.max_answer_len)
        self.doc_stride.setValue(options.doc_stride)
        self.allow_null.setChecked(options.allow_no_answer)
        self.threshold.setValue(options.null_threshold)

    def examples(self) -> list[tuple[str, Any]]:
        found = []
        for line in examples("qa"):
            question, _, context = line.partition(EXAMPLE_SEPARATOR)
            found.append((question.strip(), (question.strip(), context.strip())))
        return found

    def use_example(self, data: Any) -> None:
        self.question.setText(data[0])
        self.context.setPlainText(data[1])

    def model_loaded(self, info: ModelInfo) -> None:
        self.doc_stride.setToolTip(
            f"Tokens shared by consecutive windows; this model reads {info.max_length} tokens per window"
        )

    # -- output ----------------------------------------------------------------------------
    def clear_result(self) -> None:
        self.b_span = None
        self.table.setRowCount(0)
        self.table_b.setRowCount(0)
        self.plot.set_scores((), np.zeros(0), np.zeros(0))
        self.context.clear_highlights()
        self.title_a.setVisible(False)
        self.side_b.setVisible(False)
        self.compare_summary.setVisible(False)

    def show_outcome(self, outcome: Outcome) -> None:
        result = outcome.result
        self.b_span = None
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
        second = outcome.second
        self.title_a.setVisible(second is not None)
        self.side_b.setVisible(second is not None)
        self.compare_summary.setVisible(second is not None)
        if second is not None:
            self._fill_b(outcome)
        if result.answers:
            self.table.selectRow(0)
            self.show_answer(0)
        if second is not None and second.answers:
            self.table_b.selectRow(0)
            self.show_answer_b(0)
        best = result.best
        summary = "no answer" if best is None or best.is_null else f"“{best.answer}” ({best.score:.1%})"
        if second is not None:
            summary += (f"; compared with {outcome.second_source}: best span "
                        f"{'changed' if outcome.diff.changed else 'unchanged'}")
        self.status.emit(f"QA: {summary}")

    def _fill_b(self, outcome: Outcome) -> None:
        """B's n-best beside A's: each row's rank in A's list and its score change (B − A)."""
        assert outcome.second is not None
        source_a = self.source_a(outcome)
        self.title_a.setText(f"<b style='color:{theme.colors().series_a}'>A</b> {html.escape(short_source(source_a))}")
        self.title_b.setText(f"<b style='color:{theme.colors().series_b}'>B</b> "
                             f"{html.escape(short_source(outcome.second_source))} "
                             f"<span style='background:#fbd9c4; color:{ink_on('#fbd9c4')}'>(underlined in the "
                             "context)</span>")
        answers = outcome.second.answers
        self.table_b.blockSignals(True)
        self.table_b.setRowCount(len(answers))
        for row, item in enumerate(answers):
            rank, delta = versus_a(item, outcome.result)
            versus = "not in A's list" if rank is None else f"A #{rank}, {delta:+.4f}"
            text = item.answer if not item.is_null else "(no answer)"
            cells = [text, f"{item.score:.4f}", str(item.start), str(item.end), versus]
            for column, value in enumerate(cells):
                cell = QTableWidgetItem(value)
                if column in (1, 2, 3):
                    cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if column == 4:
                    cell.setToolTip("This span's rank among model A's answers and its score change (B − A)")
                    if rank is None:
                        cell.setForeground(QColor(theme.colors().error))
                self.table_b.setItem(row, column, cell)
        self.table_b.blockSignals(False)
        self.compare_summary.setText(span_summary(outcome.diff))

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
            self._overlay_b()
            return
        window = self.result.windows[item.window] if len(self.result.windows) > 1 else None
        self.context.show_span(item.start, item.end, window)
        covered = [i for i, (s, e) in enumerate(self.result.tokens.spans) if s < item.end and e > item.start]
        self.plot.mark(covered[0], covered[-1]) if covered else self.plot.mark(-1, -1)
        self._overlay_b()

    def show_answer_b(self, row: int) -> None:
        """Underline model B's answer `row` in the context, next to A's highlighted one."""
        second = self.outcome.second if self.outcome is not None else None
        if second is None or not 0 <= row < len(second.answers):
            return
        if self.context.toPlainText() != second.context:
            return
        item = second.answers[row]
        self.b_span = None if item.is_null else (item.start, item.end)
        a_row = self.table.currentRow()
        if self.result is not None and 0 <= a_row < len(self.result.answers):
            self.show_answer(a_row)  # redraws A's highlight, then B's
        else:
            self._overlay_b()

    def _overlay_b(self) -> None:
        """Add B's span under A's highlights: B's background and a thick underline in B's colour."""
        if self.b_span is None:
            return
        length = len(self.context.toPlainText())
        start, end = max(0, min(self.b_span[0], length)), max(0, min(self.b_span[1], length))
        if end <= start:
            return
        selection = self.context.selection(start, end, B_BACKGROUND, bold=False)
        fmt = selection.format  # B's background in the ink that reads on it, underlined in B's colour
        fmt.setFontUnderline(True)
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
        fmt.setUnderlineColor(QColor(COLOR_B))
        fmt.setToolTip("model B's answer")
        selection.format = fmt
        selections = list(self.context.extraSelections())
        # The window shading first, then B, then A's answer on top where the two overlap.
        position = 1 if self.context.window_span is not None and selections else 0
        selections.insert(position, selection)
        self.context.setExtraSelections(selections)

    def _context_edited(self) -> None:
        """An edit makes B's offsets stale as well as A's (the context drops A's itself)."""
        outcome = self.outcome
        if self.b_span is not None and outcome is not None and self.context.toPlainText() != outcome.result.context:
            self.b_span = None
            self.context.setExtraSelections([])

    def b_highlight(self) -> tuple[int, int] | None:
        """B's span as drawn in the context (None when none is drawn)."""
        for selection in self.context.extraSelections():
            if selection.format.background().color() == B_BACKGROUND:
                return selection.cursor.selectionStart(), selection.cursor.selectionEnd()
        return None
