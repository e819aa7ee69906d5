"""Fill-mask tab: type a sentence with masks, see ranked candidates per mask and the filled sentence."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton, QScrollArea, QSpinBox, QVBoxLayout, QWidget

from bertstudio.core.jobs import Outcome
from bertstudio.core.models import ModelInfo
from bertstudio.core.tasks.fill_mask import FillMaskInput, FillMaskResult, MaskPrediction
from bertstudio.resources import examples
from bertstudio.ui import theme
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.compare_panel import CompareBars

DEBOUNCE_MS = 400


class SubmitTextEdit(QPlainTextEdit):
    """Enter submits, Shift+Enter adds a line."""

    def __init__(self, on_submit: Callable[[], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._on_submit = on_submit

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
            event.modifiers() & (Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier)
        ):
            self._on_submit()
            return
        super().keyPressEvent(event)


class FillMaskTab(TaskTab):
    SPEC_KEY = "fill-mask"
    BOUND = {"text": "text", "top_k": "top_k"}  # the workspace binds these by name
    RUN_LABEL = "Predict"

    def build_inputs(self, box: QVBoxLayout) -> None:
        self.text = SubmitTextEdit(self.run)
        self.text.setPlaceholderText("Type a sentence and put the mask token where a word is missing…")
        self.text.setMaximumHeight(64)
        self.text.textChanged.connect(self._schedule)
        self.insert_mask = QPushButton("Insert mask")
        self.insert_mask.setEnabled(False)
        self.insert_mask.clicked.connect(self._insert_mask)
        self.top_k = QSpinBox()
        self.top_k.setRange(1, 50)
        self.top_k.setValue(5)
        self.top_k.setPrefix("top-k ")
        self.top_k.valueChanged.connect(lambda _k: self._schedule())
        self.options.addWidget(self.insert_mask)
        self.options.addWidget(self.top_k)
        box.addWidget(self.text)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self._run_live)

    def build_results(self, box: QVBoxLayout) -> None:
        self.filled = QLabel()
        self.filled.setWordWrap(True)
        self.filled.setTextFormat(Qt.TextFormat.RichText)
        font = self.filled.font()  # a font and margins, not a style sheet: styled widgets miss a theme switch
        font.setPixelSize(15)
        self.filled.setFont(font)
        self.filled.setContentsMargins(6, 6, 6, 6)
        self.bars_box = QVBoxLayout()
        self.bars_box.addStretch(1)
        holder = QWidget()
        holder.setLayout(self.bars_box)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(holder)
        self.bars: list[CompareBars] = []
        box.addWidget(self.filled)
        box.addWidget(scroll, 1)

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

    def examples(self) -> list[tuple[str, Any]]:
        return [(line, line) for line in examples("fill_mask")]

    def use_example(self, data: Any) -> None:
        self.text.setPlainText(str(data).replace("{mask}", self._mask_token()))

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
        super().run()

    def inputs(self) -> FillMaskInput:
        return FillMaskInput(self.text.toPlainText(), self.top_k.value())

    def set_inputs(self, inputs: FillMaskInput) -> None:
        self.text.setPlainText(inputs.text)
        self.top_k.setValue(inputs.top_k)

    # -- output ----------------------------------------------------------------------------
    def clear_result(self) -> None:
        self.filled.setText("")
        for bars in self.bars:
            bars.setParent(None)
            bars.deleteLater()
        self.bars = []

    def show_outcome(self, outcome: Outcome) -> None:
        result: FillMaskResult = outcome.result
        self.clear_result()
        filled = _highlighted(result)
        if outcome.second is not None:
            filled = f"<b>A</b> {filled}<br><b>B</b> {_highlighted(outcome.second)}"
        self.filled.setText(filled)
        from bertstudio.ui import plot_style  # pyqtgraph: imported once there is a result

        for number, mask in enumerate(result.masks):
            bars = CompareBars()
            bars.setMinimumHeight(60 + 26 * len(mask.candidates))
            title = f"mask {number + 1} (characters {mask.start}–{mask.end})" if len(result.masks) > 1 else ""
            for side in (bars.bars_a, bars.bars_b):  # both sides: A's and B's bars start at one height
                plot_style.set_title(side, title)
            labels, scores = _ranking(mask)
            tooltips = [f"{c.token!r}  id {c.token_id}  p={c.score:.4f}" for c in mask.candidates]
            if outcome.second is None:
                bars.show_one(labels, scores, tooltips)
            else:
                bars.show_two(self.source_a(outcome), outcome.second_source, (labels, scores),
                              _ranking(outcome.second.masks[number]), outcome.diff[number])
            self.bars_box.insertWidget(self.bars_box.count() - 1, bars)
            self.bars.append(bars)
        # one label-axis width per column: the 0-1 axes line up
        plot_style.align_axes([bars.bars_a for bars in self.bars])
        plot_style.align_axes([bars.bars_b for bars in self.bars])
        top = ", ".join(m.candidates[0].token for m in result.masks)
        self.status.emit(f"Fill-mask: {len(result.masks)} mask(s); best: {top}")


def _ranking(mask: MaskPrediction) -> tuple[list[str], list[float]]:
    return [c.token for c in mask.candidates], [c.score for c in mask.candidates]


def _highlighted(result: FillMaskResult) -> str:
    """The filled sentence as rich text, the predicted words marked."""
    pieces, cursor = [], 0
    colors = theme.colors()  # readable in both themes
    for start, end in result.filled_spans:
        pieces.append(html.escape(result.filled_text[cursor:start]))
        pieces.append(
            f"<b style='color:{colors.mark}; background:{colors.mark_background}'>"
            f"{html.escape(result.filled_text[start:end])}</b>"
        )
        cursor = end
    pieces.append(html.escape(result.filled_text[cursor:]))
    return "".join(pieces)
