"""Next-sentence prediction tab: does B continue A? One pair as two bars, or many B's ranked."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
)

from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.core.progress import TaskControl
from bertstudio.resources import examples
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.ranked_bars import RankedBars

LABEL_NOTE = ("BERT's NSP head: <b>label 0 = IsNext</b> (B continues A), "
              "<b>label 1 = NotNext</b> (B is a random sentence). Hover the bars for the raw logits.")


def nsp_job(request: LoadRequest, sentence_a: str, candidates: list[str], ranked: bool, control: TaskControl):  # noqa: ANN201
    from bertstudio.core.models import load_model
    from bertstudio.core.tasks.nsp import predict, rank, require_nsp_head

    loaded = load_model(request, control)
    require_nsp_head(loaded)
    control.check()
    if ranked:
        return rank(loaded, sentence_a, candidates, control)
    return predict(loaded, sentence_a, candidates[0] if candidates else "")


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
        self.bars = RankedBars()

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
        self.body.addWidget(self.bars, 1)
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
        self.run_job(nsp_job, self.sentence_a.toPlainText(), candidates, ranked)

    def show_result(self, result: object) -> None:
        from bertstudio.core.tasks.nsp import NspRanking

        self.result = result
        if isinstance(result, NspRanking):
            self.bars.getPlotItem().getAxis("bottom").setLabel("P(IsNext): probability that B continues A")
            self.bars.set_items(
                [_short(r.sentence_b) for r in result.results],
                [r.is_next for r in result.results],
                [f"{_short(r.sentence_b, 40)}: P(IsNext)={r.is_next:.4f}  logits "
                 f"[{r.logits[0]:.3f}, {r.logits[1]:.3f}]" for r in result.results],
            )
            self.show_message(result.truncation_message)
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
