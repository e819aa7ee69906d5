"""Fill-mask tab: type a sentence with masks, see ranked candidates per mask and the filled sentence."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.jobs import Outcome
from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.fill_mask import FillMaskResult
from bertstudio.resources import examples
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.compare_panel import CompareBars, CompareSource

DEBOUNCE_MS = 400


def fill_mask_job(
    request: LoadRequest, text: str, top_k: int, compare_source: str | None, control: TaskControl
) -> Outcome:
    """Model A, then (comparing) model B on the same text with its own mask token; diff per mask."""
    from bertstudio.core.jobs import run_spec
    from bertstudio.core.tasks.fill_mask import SPEC, FillMaskInput

    return run_spec(SPEC, request, FillMaskInput(text, top_k), control, compare_source)


class SubmitTextEdit(QPlainTextEdit):
    """Enter submits, Shift+Enter adds a line."""

    def __init__(self, on_submit, parent: QWidget | None = None) -> None:  # noqa: ANN001
        super().__init__(parent)
        self._on_submit = on_submit

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        ):
            self._on_submit()
            return
        super().keyPressEvent(event)


class FillMaskTab(TaskTab):
    TASK = "fill-mask"
    TITLE = "Fill-mask"
    ORDER = 10

    def build(self) -> None:
        self.result: FillMaskResult | None = None
        self.outcome: Outcome | None = None
        self.text = SubmitTextEdit(self.run)
        self.text.setPlaceholderText("Type a sentence and put the mask token where a word is missing…")
        self.text.setMaximumHeight(64)
        self.text.textChanged.connect(self._text_changed)
        self.insert_mask = QPushButton("Insert mask")
        self.insert_mask.setEnabled(False)
        self.insert_mask.clicked.connect(self._insert_mask)
        self.examples = QComboBox()
        self.examples.addItem("Examples…")
        for line in examples("fill_mask"):
            self.examples.addItem(line, line)
        self.examples.activated.connect(self._example_chosen)
        self.top_k = QSpinBox()
        self.top_k.setRange(1, 50)
        self.top_k.setValue(5)
        self.top_k.setPrefix("top-k ")
        self.top_k.valueChanged.connect(lambda _k: self._schedule())
        self.run_button = QPushButton("Predict")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda: self.runner.cancel())
        self.filled = QLabel()
        self.filled.setWordWrap(True)
        self.filled.setTextFormat(Qt.TextFormat.RichText)
        self.filled.setStyleSheet("QLabel { font-size: 15px; padding: 6px; }")
        self.bars_box = QVBoxLayout()
        self.bars_box.addStretch(1)
        holder = QWidget()
        holder.setLayout(self.bars_box)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(holder)
        self.bars: list[CompareBars] = []
        self.compare_source = CompareSource(self.model_bar.source)

        controls = QHBoxLayout()
        for widget in (self.insert_mask, self.examples, self.top_k):
            controls.addWidget(widget)
        controls.addWidget(self.compare_source, 1)
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)
        self.body.addWidget(self.text)
        self.body.addLayout(controls)
        self.body.addWidget(self.filled)
        self.body.addWidget(scroll, 1)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self._run_live)
        self.runner.started.connect(lambda: self.cancel_button.setEnabled(True))
        self.runner.finished.connect(lambda: self.cancel_button.setEnabled(False))
        self.runner.result.connect(self.show_result)
        self.runner.cancelled.connect(lambda: self.show_message("Cancelled."))

    # -- input -----------------------------------------------------------------------------
    def model_loaded(self, info: ModelInfo) -> None:
        self.insert_mask.setEnabled(info.mask_token is not None)
        self.insert_mask.setToolTip(f"Insert {info.mask_token}" if info.mask_token else "This model has no mask token")
        self._schedule()

    def _mask_token(self) -> str:
        info = self.model_info
        return info.mask_token if info and info.mask_token else "[MASK]"

    def _insert_mask(self) -> None:
        self.text.insertPlainText(self._mask_token())
        self.text.setFocus()

    def _example_chosen(self, index: int) -> None:
        template = self.examples.itemData(index)
        if template:
            self.text.setPlainText(template.replace("{mask}", self._mask_token()))
        self.examples.setCurrentIndex(0)

    def _text_changed(self) -> None:
        self._schedule()

    def _schedule(self) -> None:
        """Live prediction: wait for a pause in typing, then run if there is a mask to fill."""
        if self.model_info is not None:
            self._debounce.start()

    def _run_live(self) -> None:
        info = self.model_info
        if info is not None and info.mask_token and info.mask_token in self.text.toPlainText():
            self.run()

    def run(self) -> None:
        self._debounce.stop()
        compare_source = self.compare_source.source()
        if self.compare_source.enabled.isChecked() and not compare_source:
            self.show_message("Choose the second model to compare with, or untick “Compare with…”.", error=True)
            return
        self.run_job(fill_mask_job, self.text.toPlainText(), self.top_k.value(), compare_source)

    # -- output ----------------------------------------------------------------------------
    def show_result(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self.result = result = outcome.result
        filled = _highlighted(result)
        if outcome.second is not None:
            filled = f"<b>A</b> {filled}<br><b>B</b> {_highlighted(outcome.second)}"
        self.filled.setText(filled)
        for bars in self.bars:
            bars.setParent(None)
            bars.deleteLater()
        self.bars = []
        for number, mask in enumerate(result.masks):
            bars = CompareBars()
            bars.setMinimumHeight(60 + 26 * len(mask.candidates))
            title = f"mask {number + 1} (characters {mask.start}–{mask.end})" if len(result.masks) > 1 else ""
            bars.bars_a.setTitle(title)
            labels, scores = _ranking(mask)
            tooltips = [f"{c.token!r}  id {c.token_id}  p={c.score:.4f}" for c in mask.candidates]
            if outcome.second is None:
                bars.show_one(labels, scores, tooltips)
            else:
                bars.show_two(result_source(self), outcome.second_source, (labels, scores),
                              _ranking(outcome.second.masks[number]), outcome.diff[number])
            self.bars_box.insertWidget(self.bars_box.count() - 1, bars)
            self.bars.append(bars)
        self.show_message("\n".join(note.text for note in outcome.notes))
        top = ", ".join(m.candidates[0].token for m in result.masks)
        self.status.emit(f"Fill-mask: {len(result.masks)} mask(s); best: {top}")


def result_source(tab: FillMaskTab) -> str:
    info = tab.model_info
    return info.request.source if info else ""


def _ranking(mask: Any) -> tuple[list[str], list[float]]:
    return [c.token for c in mask.candidates], [c.score for c in mask.candidates]


def _highlighted(result: FillMaskResult) -> str:
    """The filled sentence as rich text, the predicted words marked."""
    pieces, cursor = [], 0
    for start, end in result.filled_spans:
        pieces.append(html.escape(result.filled_text[cursor:start]))
        pieces.append(
            f"<b style='color:#1a56b0; background:#e3ecfa'>{html.escape(result.filled_text[start:end])}</b>"
        )
        cursor = end
    pieces.append(html.escape(result.filled_text[cursor:]))
    return "".join(pieces)
