"""Next-sentence prediction tab: does B continue A? One pair as two bars, or many B's ranked.

Optionally a second model ("Compare with…") reads the same sentences in the same worker job;
both are shown side by side with the changed top label, the probability deltas and, in rank
mode, how far each candidate B moved.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtWidgets import QCheckBox, QLabel, QPushButton, QVBoxLayout

from bertstudio.core.jobs import Outcome
from bertstudio.core.models import ModelInfo
from bertstudio.core.tasks.nsp import NspInput, NspRanking, NspResult, candidates_from_lines, ranked_items
from bertstudio.resources import examples
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.compare_panel import CompareBars, fit_labels, ranking_summary
from bertstudio.ui.widgets.forms import text_box
from bertstudio.ui.widgets.labelled_matrix import short

LABEL_NOTE = ("BERT's NSP head: <b>label 0 = IsNext</b> (B continues A), "
              "<b>label 1 = NotNext</b> (B is a random sentence). Hover the bars for the raw logits.")


class NspTab(TaskTab):
    SPEC_KEY = "nsp"
    ONNX_RUNTIME = True  # its runs are whole forwards: an exported model may run them (ONNX Runtime)
    BOUND = {"rank": "rank_mode", "sentence_a": "sentence_a", "sentence_b": "sentence_b"}  # bound by name
    RUN_LABEL = "Predict"

    def build_inputs(self, box: QVBoxLayout) -> None:
        self.label_note = QLabel(LABEL_NOTE)
        self.label_note.setWordWrap(True)
        self.sentence_a = text_box("Sentence A…", 70)
        self.sentence_b = text_box("Sentence B… (in rank mode: one candidate per line)", 120)
        self.rank_mode = QCheckBox("Rank several B's (one per line)")
        self.rank_mode.toggled.connect(self._mode_changed)
        self.swap_button = QPushButton("Swap A ⇄ B")
        self.swap_button.clicked.connect(self.swap)
        self.options.addWidget(self.swap_button)
        self.options.addWidget(self.rank_mode)
        box.addWidget(self.label_note)
        box.addWidget(QLabel("Sentence A"))
        box.addWidget(self.sentence_a)
        box.addWidget(QLabel("Sentence B"))
        box.addWidget(self.sentence_b)

    def build_results(self, box: QVBoxLayout) -> None:
        self.compare_bars = CompareBars()
        self.bars = self.compare_bars.bars_a  # model A's bars (the only ones unless comparing)
        box.addWidget(self.compare_bars, 1)

    def model_loaded(self, info: ModelInfo) -> None:
        if not info.head_report.complete:
            self.show_message(
                f"{info.architecture} from {info.request.source} has no trained next-sentence-prediction head, "
                "so it cannot be used here. Choose a checkpoint saved with BertForPreTraining or "
                "BertForNextSentencePrediction (e.g. bert-base-uncased).", error=True)
            self.model_bar.warning_label.setVisible(False)  # the same cause, said once (in red)

    def swap(self) -> None:
        a, b = self.sentence_a.toPlainText(), self.sentence_b.toPlainText()
        self.sentence_a.setPlainText(b)
        self.sentence_b.setPlainText(a)

    def _mode_changed(self, ranked: bool) -> None:
        self.swap_button.setEnabled(not ranked)
        self.run_button.setText("Rank" if ranked else "Predict")

    def examples(self) -> list[tuple[str, Any]]:
        found = []
        for line in examples("nsp"):
            kind, a, b = (part.strip() for part in line.split("|", 2))
            found.append((f"{kind}: {short(a, 30)} → {short(b, 30)}", NspInput(a, (b,))))
        return found

    def inputs(self) -> NspInput:
        b_text = self.sentence_b.toPlainText()
        if self.rank_mode.isChecked():
            return NspInput(self.sentence_a.toPlainText(), tuple(candidates_from_lines(b_text)))
        return NspInput(self.sentence_a.toPlainText(), (b_text,))

    def set_inputs(self, inputs: NspInput) -> None:
        self.rank_mode.setChecked(len(inputs.candidates) > 1)
        self.sentence_a.setPlainText(inputs.sentence_a)
        self.sentence_b.setPlainText("\n".join(inputs.candidates))

    def clear_result(self) -> None:
        self.bars.set_items([], [], [])
        self.compare_bars.hide_b()

    def show_outcome(self, outcome: Outcome) -> None:
        result = outcome.result
        self.compare_bars.hide_b()
        if outcome.second is not None:
            self._show_two(outcome, outcome.second)
            return
        if isinstance(result, NspRanking):
            self.bars.getPlotItem().getAxis("bottom").setLabel("P(IsNext): probability that B continues A")
            self.bars.set_items(
                [short(r.sentence_b, 60) for r in result.results],
                [r.is_next for r in result.results],
                [f"{short(r.sentence_b, 40)}: P(IsNext)={r.is_next:.4f}  logits "
                 f"[{r.logits[0]:.3f}, {r.logits[1]:.3f}]" for r in result.results],
            )
            best = result.results[0]
            self.status.emit(f"Next sentence: best of {len(result.results)} is “{short(best.sentence_b, 40)}” "
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
        self.status.emit(f"Next sentence: P(IsNext) = {result.is_next:.1%}")

    # -- comparing two models ----------------------------------------------------------------
    def _show_two(self, outcome: Outcome, second: NspResult | NspRanking) -> None:
        """A's and B's bars side by side; B's labels carry the probability change (and rank move)."""
        ranked = isinstance(outcome.result, NspRanking)
        diff = outcome.diff
        items_a, items_b = ranked_items(outcome.result), ranked_items(second)
        source_a = self.source_a(outcome)
        self.compare_bars.show_two(source_a, outcome.second_source,
                                   ([label for label, _ in items_a], [p for _, p in items_a]),
                                   ([label for label, _ in items_b], [p for _, p in items_b]), diff)
        axis = "P(IsNext): probability that B continues A" if ranked else "probability"
        self.compare_bars.set_value_format("{:.1%}", axis)
        shown_a = [short(label, 40) for label, _ in items_a]
        self.bars.set_items(shown_a, [p for _, p in items_a], [f"{label}: {p:.4f}" for label, p in items_a])
        marked = [self.marked_label(label, diff, ranked) for label, _ in items_b]
        fit_labels(self.bars, shown_a)
        fit_labels(self.compare_bars.bars_b, marked)
        self.compare_bars.bars_b.set_items(marked, [p for _, p in items_b],
                                           [f"{label}: {p:.4f}" for label, p in items_b])
        summary = ranking_summary(diff)
        if ranked:
            moves = [f"{html.escape(short(d.label, 40))} {d.rank_a}→{d.rank_b}"
                     for d in diff.deltas if d.rank_a != d.rank_b]
            summary += ("<br><b>Rank changes:</b> " + "; ".join(moves)) if moves else "<br>No candidate changed rank."
        self.compare_bars.summary.setText(summary)
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
        return f"{short(label, 40)} ({', '.join(marks)})" if marks else short(label, 40)
