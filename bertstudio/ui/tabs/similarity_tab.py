"""Similarity tab: sentence A against one or more sentences B, the cosines as ranked bars on a fixed
-1..1 axis (a 0.3 looks like a 0.3 whatever the others are), and with several B's the similarity
matrix of every pair. Compare and heads off come from the template: model B's bars sit beside A's
on the same axis, each label carrying its cosine change and rank move.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QVBoxLayout, QWidget

from bertstudio.core.jobs import Outcome
from bertstudio.core.tasks.similarity import (
    POOLINGS,
    SimilarityInput,
    SimilarityResult,
    check_inputs,
    sentences_from_lines,
)
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.compare_panel import CompareBars, fit_labels
from bertstudio.ui.widgets.forms import text_box
from bertstudio.ui.widgets.labelled_matrix import LabelledMatrix, short
from bertstudio.ui.widgets.layouts import splitter

AXIS = "cosine similarity with sentence A"
POOLING_LABELS = {"mean": "Mean of the tokens (sentence-transformers)", "cls": "First token ([CLS])"}
EXAMPLES = (
    ("Paraphrase vs unrelated", "A man is playing a guitar.",
     ("A person plays an instrument.", "Someone is performing music on stage.",
      "The stock market fell sharply today.")),
    ("Questions", "How do I reset my password?",
     ("I forgot my login, how can I change it?", "What is the capital of France?",
      "Where can I update my account key?")),
)


# The ends a hair inside the range, as plot_style's probability ticks: pyqtgraph drops a tick on the edge.
COSINE_TICKS = [(-1 + 1e-6, "-1"), (-0.5, "-0.5"), (0.0, "0"), (0.5, "0.5"), (1 - 1e-6, "1")]


def _cosine_axis(bars: Any) -> None:
    """Ticks at -1, -0.5, 0, 0.5, 1 (the ends labelled), set again after each redraw (which resets them)."""
    item = bars.getPlotItem()
    item.getAxis("bottom").setTicks([COSINE_TICKS])
    item.getAxis("bottom").setStyle(hideOverlappingLabels=False)  # keep the "-1" and "1" at the ends
    item.setContentsMargins(0, 0, 10, 0)  # room for the "1" at the right end
    item.showGrid(x=False)  # pyqtgraph's grid clips the end labels (plot_style.probability_axis)


class SimilarityMatrix(LabelledMatrix):
    """Cosines of every pair (A, B1, B2...) on a fixed -1..1 diverging scale, the value in each cell."""

    MAX_WRITTEN = 144  # cells; beyond this the values are in the tooltip only

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__((-1.0, 1.0), "CET-D1", "cosine", self.MAX_WRITTEN, parent=parent)
        self.setMinimumHeight(220)

    def set_matrix(self, labels: tuple[str, ...], matrix: tuple[tuple[float, ...], ...]) -> None:
        self.show_cells(labels, matrix,
                        lambda row, column: (f"{matrix[row][column]:.2f}", abs(matrix[row][column]) >= 0.6))
        self.setToolTip("\n".join(f"{i}: {label}" for i, label in enumerate(labels)))


class SimilarityTab(TaskTab):
    SPEC_KEY = "similarity"
    BOUND = {"a": "sentence_a", "bs": "sentences_b", "pooling": "pooling"}  # the workspace binds these by name
    RUN_LABEL = "Compare sentences"

    def build_inputs(self, box: QVBoxLayout) -> None:
        self.sentence_a = text_box("Sentence A…", 70)
        self.sentences_b = text_box("Sentences B, one per line…", 120)
        self.pooling = QComboBox()
        for key in POOLINGS:
            self.pooling.addItem(POOLING_LABELS[key], key)
        self.pooling.setToolTip("How the token states become one sentence embedding: the mean over the attention "
                                "mask (what all-MiniLM-L6-v2 was trained with) or the first token's state.")
        self.options.addWidget(QLabel("Pooling"))
        self.options.addWidget(self.pooling)
        box.addWidget(QLabel("Sentence A"))
        box.addWidget(self.sentence_a)
        box.addWidget(QLabel("Sentences B (one per line)"))
        box.addWidget(self.sentences_b)

    def build_results(self, box: QVBoxLayout) -> None:
        self.compare_bars = CompareBars()
        self.compare_bars.set_value_format("{:+.3f}", AXIS, probability=False)
        for bars in (self.compare_bars.bars_a, self.compare_bars.bars_b):
            bars.value_range = (-1.0, 1.0)  # cosines: one fixed axis, never stretched to the values
            _cosine_axis(bars)
        self.bars = self.compare_bars.bars_a
        self.matrix = SimilarityMatrix()
        self.matrix.setVisible(False)
        # Side by side: the ranked bars keep the tab's whole height (one row per sentence B), the matrix
        # of every pair beside them; the template remembers where the user puts the divider.
        split = splitter(Qt.Orientation.Horizontal, self.compare_bars, self.matrix)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        box.addWidget(split, 1)

    def examples(self) -> list[tuple[str, Any]]:
        return [(label, SimilarityInput(a, bs)) for label, a, bs in EXAMPLES]

    def inputs(self) -> SimilarityInput:
        inputs = SimilarityInput(self.sentence_a.toPlainText(), sentences_from_lines(self.sentences_b.toPlainText()),
                                 str(self.pooling.currentData()))
        check_inputs(inputs)  # said at once, before a job starts
        return inputs

    def set_inputs(self, inputs: SimilarityInput) -> None:
        self.sentence_a.setPlainText(inputs.a)
        self.sentences_b.setPlainText("\n".join(inputs.bs))
        self._set_pooling(inputs.pooling)

    def _set_pooling(self, pooling: str) -> None:
        index = self.pooling.findData(pooling)
        self.pooling.setCurrentIndex(index if index >= 0 else 0)

    def clear_result(self) -> None:
        self.bars.set_items([], [], [])
        _cosine_axis(self.bars)
        self.compare_bars.hide_b()
        self.matrix.setVisible(False)

    def show_outcome(self, outcome: Outcome) -> None:
        result: SimilarityResult = outcome.result
        if outcome.second is not None:
            self._show_two(outcome, outcome.second)
        else:
            ranked = result.ranked
            self.compare_bars.show_one([s.text for s in ranked], [s.score for s in ranked],
                                       [f"{s.score:+.4f}  {s.text}" for s in ranked])
        for bars in (self.compare_bars.bars_a, self.compare_bars.bars_b):
            _cosine_axis(bars)
        self._show_matrix(result)
        best = result.ranked[0]
        self.status.emit(f"Similarity: most similar to A is “{short(best.text, 40)}” ({best.score:+.3f}, "
                         f"{result.pooling} pooling)")

    def _show_matrix(self, result: SimilarityResult) -> None:
        """The matrix of every pair, when there is more than one pair to see."""
        several = len(result.scores) > 1
        self.matrix.setVisible(several)
        if several:
            labels = ("A", *(f"B{i + 1}" for i in range(len(result.scores))))
            self.matrix.set_matrix(labels, result.matrix)

    def _show_two(self, outcome: Outcome, other: SimilarityResult) -> None:
        """A's and B's bars side by side on the -1..1 axis; B's labels carry the change and rank move."""
        diff = outcome.diff
        first, second = outcome.result.ranked, other.ranked
        source_a = self.source_a(outcome)
        self.compare_bars.show_two(source_a, outcome.second_source, ([s.text for s in first], [s.score for s in first]),
                                   ([s.text for s in second], [s.score for s in second]), diff)
        marked = [self.marked_label(s.text, diff) for s in second]
        fit_labels(self.compare_bars.bars_b, marked)
        self.compare_bars.bars_b.set_items(marked, [s.score for s in second],
                                           [f"{s.score:+.4f}  {s.text}" for s in second])
        changes = [f"{html.escape(short(d.label, 40))} {d.delta:+.3f}" for d in diff.deltas if d.delta is not None]
        head = (f"<b>Most similar changed:</b> {html.escape(str(diff.top_a))} → {html.escape(str(diff.top_b))}"
                if diff.top_changed else f"Most similar unchanged: {html.escape(str(diff.top_a))}")
        self.compare_bars.summary.setText(head + (" · largest cosine changes (B − A): " + ", ".join(changes[:3])
                                                  if changes else ""))

    @staticmethod
    def marked_label(label: str, diff: Any) -> str:
        """B's bar label: the cosine change and the rank move (▲ up, ▼ down, = same)."""
        delta = diff.delta_of(label)
        if delta is None or delta.delta is None:
            return short(label, 40)
        move = (delta.rank_a or 0) - (delta.rank_b or 0)
        rank = f"▲{move}" if move > 0 else f"▼{-move}" if move < 0 else "="
        return f"{short(label, 40)} ({delta.delta:+.3f}, {rank})"
