"""Next-sentence prediction tab: does B continue A? One pair as two bars, or many B's ranked.

Optionally a second model ("Compare with…") reads the same sentences in the same worker job;
both are shown side by side with the changed top label, the probability deltas and, in rank
mode, how far each candidate B moved.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
)

from bertstudio.core.jobs import Outcome
from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.core.progress import TaskControl
from bertstudio.resources import examples
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.compare_panel import CompareBars, CompareSource, _fit_labels, ranking_summary

LABEL_NOTE = ("BERT's NSP head: <b>label 0 = IsNext</b> (B continues A), "
              "<b>label 1 = NotNext</b> (B is a random sentence). Hover the bars for the raw logits.")


def _predict(loaded: Any, sentence_a: str, candidates: list[str], ranked: bool, control: TaskControl) -> Any:
    from bertstudio.core.tasks.nsp import predict, rank, require_nsp_head

    require_nsp_head(loaded)
    if ranked:
        return rank(loaded, sentence_a, candidates, control)
    return predict(loaded, sentence_a, candidates[0] if candidates else "")


def nsp_job(request: LoadRequest, sentence_a: str, candidates: list[str], ranked: bool,
            compare_source: str | None = None, *, control: TaskControl) -> Outcome:
    """Model A on the sentences; then, when comparing, model B on the same ones and the diff."""
    from bertstudio.core.jobs import run_task
    from bertstudio.core.tasks.nsp import compare

    return run_task(request, control, lambda loaded: _predict(loaded, sentence_a, candidates, ranked, control),
                    compare_source, compare)


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


class NspTab(TaskTab):
    TASK = "nsp"
    TITLE = "Next sentence"
    ORDER = 20

    def build(self) -> None:
        self.result = None
        self.label_note = QLabel(LABEL_NOTE)
        self.label_note.setWordWrap(True)
        self.sentence_a = QPlainTextEdit()
        self.sentence_a.setPlaceholderText("Sentence A…")
        self.sentence_a.setMaximumHeight(70)
        self.sentence_b = QPlainTextEdit()
        self.sentence_b.setPlaceholderText("Sentence B… (in rank mode: one candidate per line)")
        self.sentence_b.setMaximumHeight(120)
        self.rank_mode = QCheckBox("Rank several B's (one per line)")
        self.rank_mode.toggled.connect(self._mode_changed)
        self.swap_button = QPushButton("Swap A ⇄ B")
        self.swap_button.clicked.connect(self.swap)
        self.examples = QComboBox()
        self.examples.addItem("Example pairs…")
        for line in examples("nsp"):
            kind, a, b = (part.strip() for part in line.split("|", 2))
            self.examples.addItem(f"{kind}: {_short(a, 30)} → {_short(b, 30)}", (a, b))
        self.examples.activated.connect(self._example_chosen)
        self.run_button = QPushButton("Predict")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda: self.runner.cancel())
        self.compare_source = CompareSource(self.model_bar.source)
        self.compare_bars = CompareBars()
        self.bars = self.compare_bars.bars_a  # model A's bars (the only ones unless comparing)
        self.outcome: Outcome | None = None

        controls = QHBoxLayout()
        for widget in (self.swap_button, self.examples, self.rank_mode):
            controls.addWidget(widget)
        controls.addStretch(1)
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)
        self.body.addWidget(self.label_note)
        self.body.addWidget(QLabel("Sentence A"))
        self.body.addWidget(self.sentence_a)
        self.body.addWidget(QLabel("Sentence B"))
        self.body.addWidget(self.sentence_b)
        self.body.addLayout(controls)
        self.body.addWidget(self.compare_source)
        self.body.addWidget(self.compare_bars, 1)
        self.runner.started.connect(lambda: self.cancel_button.setEnabled(True))
        self.runner.finished.connect(lambda: self.cancel_button.setEnabled(False))
        self.runner.result.connect(self.show_result)
        self.runner.cancelled.connect(lambda: self.show_message("Cancelled."))

    def model_loaded(self, info: ModelInfo) -> None:
        if not info.head_report.complete:
            self.show_message(
                f"{info.architecture} from {info.request.source} has no trained next-sentence-prediction head, "
                "so it cannot be used here. Choose a checkpoint saved with BertForPreTraining or "
                "BertForNextSentencePrediction (e.g. bert-base-uncased).", error=True)
        else:
            self.clear_message()

    def swap(self) -> None:
        a, b = self.sentence_a.toPlainText(), self.sentence_b.toPlainText()
        self.sentence_a.setPlainText(b)
        self.sentence_b.setPlainText(a)

    def _mode_changed(self, ranked: bool) -> None:
        self.swap_button.setEnabled(not ranked)
        self.run_button.setText("Rank" if ranked else "Predict")

    def _example_chosen(self, index: int) -> None:
        pair = self.examples.itemData(index)
        if pair:
            self.sentence_a.setPlainText(pair[0])
            self.sentence_b.setPlainText(pair[1])
            self.rank_mode.setChecked(False)
        self.examples.setCurrentIndex(0)

    def run(self) -> None:
        from bertstudio.core.tasks.nsp import candidates_from_lines

        ranked = self.rank_mode.isChecked()
        b_text = self.sentence_b.toPlainText()
        candidates = candidates_from_lines(b_text) if ranked else [b_text]
        compare_source = self.compare_source.source()
        if self.compare_source.enabled.isChecked() and not compare_source:
            self.show_message("Choose the second model to compare with, or untick “Compare with…”.", error=True)
            return
        self.run_job(nsp_job, self.sentence_a.toPlainText(), candidates, ranked, compare_source)

    def show_result(self, outcome: Outcome) -> None:
        from bertstudio.core.tasks.nsp import NspRanking

        self.outcome = outcome
        result = self.result = outcome.result
        self.compare_bars.title_a.setVisible(False)
        self.compare_bars.side_b.setVisible(False)
        self.compare_bars.summary.setVisible(False)
        if outcome.second is not None:
            self._show_two(outcome)
            return
        if isinstance(result, NspRanking):
            self.bars.getPlotItem().getAxis("bottom").setLabel("P(IsNext): probability that B continues A")
            self.bars.set_items(
                [_short(r.sentence_b) for r in result.results],
                [r.is_next for r in result.results],
                [f"{_short(r.sentence_b, 40)}: P(IsNext)={r.is_next:.4f}  logits "
                 f"[{r.logits[0]:.3f}, {r.logits[1]:.3f}]" for r in result.results],
            )
            self.show_message("\n".join(n.text for n in result.notes))
            best = result.results[0]
            self.status.emit(f"Next sentence: best of {len(result.results)} is “{_short(best.sentence_b, 40)}” "
                             f"({best.is_next:.1%})")
            return
        self.bars.getPlotItem().getAxis("bottom").setLabel("probability")
        logits = f"logits [label 0: {result.logits[0]:.4f}, label 1: {result.logits[1]:.4f}]"
        self.bars.set_items(
            ["IsNext (label 0)", "NotNext (label 1)"],
            [result.is_next, result.not_next],
            [f"IsNext: B continues A, p={result.is_next:.4f}", f"NotNext: B is random, p={result.not_next:.4f}",
             logits],
        )
        self.show_message("The pair was longer than the model reads and was cut." if result.truncated else "")
        self.status.emit(f"Next sentence: P(IsNext) = {result.is_next:.1%}")

    # -- comparing two models ----------------------------------------------------------------
    def _show_two(self, outcome: Outcome) -> None:
        """A's and B's bars side by side; B's labels carry the probability change (and rank move)."""
        from bertstudio.core.tasks.nsp import NspRanking

        ranked = isinstance(outcome.result, NspRanking)
        diff = outcome.diff
        from bertstudio.core.tasks.nsp import ranked_items

        items_a, items_b = ranked_items(outcome.result), ranked_items(outcome.second)
        source_a = self.model_request().source if self.model_request() else "A"
        self.compare_bars.show_two(source_a, outcome.second_source,
                                   ([label for label, _ in items_a], [p for _, p in items_a]),
                                   ([label for label, _ in items_b], [p for _, p in items_b]), diff)
        axis = "P(IsNext): probability that B continues A" if ranked else "probability"
        self.compare_bars.set_value_format("{:.1%}", axis)
        shown_a = [_short(label, 40) for label, _ in items_a]
        self.bars.set_items(shown_a, [p for _, p in items_a], [f"{label}: {p:.4f}" for label, p in items_a])
        marked = [self.marked_label(label, diff, ranked) for label, _ in items_b]
        _fit_labels(self.bars, shown_a)
        _fit_labels(self.compare_bars.bars_b, marked)
        self.compare_bars.bars_b.set_items(marked, [p for _, p in items_b],
                                           [f"{label}: {p:.4f}" for label, p in items_b])
        summary = ranking_summary(diff)
        if ranked:
            moves = [f"{html.escape(_short(d.label, 40))} {d.rank_a}→{d.rank_b}"
                     for d in diff.deltas if d.rank_a != d.rank_b]
            summary += ("<br><b>Rank changes:</b> " + "; ".join(moves)) if moves else "<br>No candidate changed rank."
        self.compare_bars.summary.setText(summary)
        self.show_message("\n".join(n.text for n in outcome.notes))
        top = "changed" if diff.top_changed else "unchanged"
        self.status.emit(f"Next sentence: compared with {outcome.second_source}; top {top}")

    @staticmethod
    def marked_label(label: str, diff: Any, ranked: bool) -> str:
        """B's bar label: the probability change and, in rank mode, the rank move (▲ up, ▼ down)."""
        delta = diff.delta_of(label)
        marks = []
        if delta is not None and delta.delta is not None:
            marks.append(f"{delta.delta:+.1%}")
        if ranked and delta is not None and delta.rank_a is not None and delta.rank_b is not None:
            move = delta.rank_a - delta.rank_b
            marks.append(f"▲{move}" if move > 0 else f"▼{-move}" if move < 0 else "=")
        return f"{_short(label, 40)} ({', '.join(marks)})" if marks else _short(label, 40)
