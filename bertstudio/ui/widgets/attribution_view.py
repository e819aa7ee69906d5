"""Token attributions: the tokens coloured on a diverging scale, a sortable table, export.

Blue is against the target, red for it, white none; the scale is symmetric around 0 (±the
largest |attribution| of the shown tokens) so the colour of a token means the same on both
sides. The gradient-norm method has no sign: its scale runs from white to red.

`PinnedPairPanel` is a task tab's "Explain A and B…": the pinned input's and the shown edit's
attributions side by side on one scale, and below them the difference (edit − pinned) token by
token (core/explain/pinned.py aligns them; a removed token is struck through, an added one dashed).
"""

from __future__ import annotations

import csv
import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.errors import BertStudioError
from bertstudio.core.explain.methods import INTEGRATED_GRADIENTS, METHODS, TITLES
from bertstudio.core.notes import info
from bertstudio.ui.tabs.frame import error_note
from bertstudio.ui.tabs.run_lifecycle import JobDialog
from bertstudio.ui.theme import ink_on
from bertstudio.ui.widgets.layouts import bar_above, column, row, splitter
from bertstudio.ui.widgets.notes_area import NotesArea
from bertstudio.ui.widgets.run_controls import ProgressLine
from bertstudio.workers.runner import TaskRunner

COLORMAP = "CET-D1"  # blue - white - red, perceptually even


def _colormap() -> Any:
    import pyqtgraph as pg

    return pg.colormap.get(COLORMAP)


def shown_token(token: str) -> str:
    """A wordpiece/BPE/SentencePiece token as a person reads it ('Ġword' and '▁word' -> 'word')."""
    return token.replace("Ġ", "").replace("▁", "").replace("Ċ", "↵") or token


def colour_of(value: float, scale: float) -> str:
    """The diverging colour of `value` on a scale symmetric around 0 (hex)."""
    position = 0.5 + 0.5 * max(-1.0, min(1.0, value / scale)) if scale > 0 else 0.5
    return str(_colormap().map(position, mode="qcolor").name())


def token_spans(shown: list[tuple[str, float | None, int]], scale: float, struck: set[int] | None = None,
                dashed: set[int] | None = None) -> list[str]:
    """HTML spans of (token, value, row): coloured by value on the scale, a blank line between rows.
    A value of None is drawn grey; `struck`: indices crossed out (removed), `dashed`: framed (added)."""
    pieces: list[str] = []
    row = None
    for index, (token, value, in_row) in enumerate(shown):
        if row is not None and in_row != row:
            pieces.append("<br><br>")
        row = in_row
        glue = token.startswith("##")
        text = html.escape(shown_token(token[2:] if glue else token))
        if value is None:
            style, tip = "background:#d9d9d9; color:#333; border:1px dashed #777;", "only in one input"
        else:
            ink = "white" if scale > 0 and abs(value) > 0.6 * scale else "black"
            style, tip = f"background:{colour_of(value, scale)}; color:{ink};", f"{value:+.5f}"
        if struck and index in struck:
            text = f"<s>{text}</s>"
        if dashed and index in dashed:
            style += " border:2px dashed #444;"
        pieces.append(("" if glue else " ") + f'<span style="{style} padding:2px;" title="{tip}">{text}</span>')
    return pieces


def tokens_page(pieces: list[str]) -> str:
    return f'<div style="font-size:15px; line-height:200%;">{"".join(pieces)}</div>'


class AttributionView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.explanation: Any = None
        self.summary = QLabel("Run an explanation to see which tokens drove the output.")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.legend = QLabel()
        self.legend.setMinimumWidth(220)
        self.legend.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hide_special = QCheckBox("Hide special tokens")
        self.hide_special.toggled.connect(self._redraw)
        self.csv_button = QPushButton("Export CSV…")
        self.json_button = QPushButton("Export JSON…")
        self.csv_button.clicked.connect(lambda: self._export("csv"))
        self.json_button.clicked.connect(lambda: self._export("json"))
        self.tokens = QTextBrowser()
        self.tokens.setOpenLinks(False)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["#", "token", "attribution", "sequence"])
        self.table.setSortingEnabled(True)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        # Header and at least five rows, whatever the window (at 900x600 it shrank to one cut-off row):
        # a smaller window scrolls the tab's page instead.
        self.table.setMinimumHeight(self.table.horizontalHeader().sizeHint().height()
                                    + 5 * self.table.verticalHeader().defaultSectionSize() + 4)

        bar = row(self.summary, self.legend, self.hide_special, self.csv_button, self.json_button, stretch=0)
        bar_above(self, bar, splitter(Qt.Orientation.Horizontal, self.tokens, self.table, sizes=(640, 360)))
        self._set_export(False)

    def _set_export(self, enabled: bool) -> None:
        self.csv_button.setEnabled(enabled)
        self.json_button.setEnabled(enabled)

    def clear(self) -> None:
        self.explanation = None
        self.tokens.clear()
        self.table.setRowCount(0)
        self.legend.clear()
        self._set_export(False)

    def show_explanation(self, explanation: Any) -> None:
        self.explanation = explanation
        parts = [f"<b>{html.escape(explanation.method)}</b> of <b>{html.escape(explanation.target_label)}</b>"
                 f" = {explanation.score:.4f}"]
        if explanation.delta is not None:
            baseline = getattr(explanation, "baseline", None)  # Integrated Gradients' start: [PAD] or zero
            parts.append(f"F({'zero ' if baseline == 'zero' else ''}baseline) = {explanation.baseline_score:.4f} "
                         f"· delta = {explanation.delta:+.2e} ({explanation.steps} steps)")
        if getattr(explanation, "samples", None) is not None:  # LIME / Kernel SHAP
            parts.append(f"{explanation.samples} samples · seed {explanation.seed}")
        self.summary.setText(" · ".join(parts))
        self._set_export(True)
        self._redraw()

    def visible(self) -> list[int]:
        """Indices of the tokens shown (special tokens hidden on request)."""
        e = self.explanation
        if e is None:
            return []
        return [i for i in range(len(e.tokens)) if not (self.hide_special.isChecked() and e.special[i])]

    def scale(self) -> float:
        e = self.explanation
        return max((abs(e.attributions[i]) for i in self.visible()), default=0.0) if e else 0.0

    def _redraw(self) -> None:
        e = self.explanation
        if e is None:
            return
        shown, scale = self.visible(), self.scale()
        low = "0" if e.method == "gradient" else f"−{scale:.2g}"
        stops = ", ".join(f"stop:{s} {colour_of((2 * s - 1) * scale if e.method != 'gradient' else s * scale, scale)}"
                          for s in (0.0, 0.5, 1.0))
        self.legend.setText(f"{low}  …  0  …  +{scale:.2g}" if e.method != "gradient" else f"0  …  {scale:.2g}")
        self.legend.setStyleSheet(f"QLabel {{ background: qlineargradient(x1:0, y1:0, x2:1, y2:0, {stops}); "
                                  f"color: {ink_on(colour_of(0.0, scale))}; padding: 2px; border: 1px solid #999; }}")
        pieces = token_spans([(e.tokens[i], e.attributions[i], e.rows[i]) for i in shown], scale)
        self.tokens.setHtml(tokens_page(pieces))
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(shown))
        for r, i in enumerate(shown):
            for c, value in enumerate((i, shown_token(e.tokens[i]), e.attributions[i], e.rows[i])):
                item = QTableWidgetItem()
                item.setData(Qt.ItemDataRole.DisplayRole, value)
                self.table.setItem(r, c, item)
        self.table.setColumnHidden(3, e.sequences <= 1)  # one sequence: nothing to tell apart
        self.table.setSortingEnabled(True)
        self.table.sortItems(2, Qt.SortOrder.DescendingOrder)  # the tokens that pushed most towards the target

    # -- export ------------------------------------------------------------------------------
    def save_csv(self, path: str | Path) -> None:
        e = self.explanation
        with Path(path).open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["index", "token", "attribution", "sequence", "special"])
            for i, (token, value) in enumerate(zip(e.tokens, e.attributions, strict=True)):
                writer.writerow([i, token, value, e.rows[i], e.special[i]])

    def save_json(self, path: str | Path) -> None:
        from bertstudio.core.outputs import write_json

        write_json(path, self.explanation.to_json())  # valid JSON, written atomically

    def _export(self, kind: str) -> None:
        if self.explanation is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export attributions", f"attributions.{kind}",
                                              "CSV (*.csv)" if kind == "csv" else "JSON (*.json)")
        if path:
            (self.save_csv if kind == "csv" else self.save_json)(path)


class PinnedPairPanel(JobDialog):
    """`source()` gives (LoadRequest or None, task key, pinned texts, edit texts, the edit's label) or raises
    BertStudioError; `refresh()` explains them again (the tab calls it when another edit is shown)."""

    def __init__(self, source: Callable[[], tuple[Any, str, tuple[str, ...], tuple[str, ...], str]],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = source
        self.pair: Any = None
        self.edit_label = "edit"
        self.setWindowTitle("Explain A and B — the pinned input and the edit")
        self.resize(1000, 460)
        self.runner = TaskRunner(self)
        self.method = QComboBox()
        for key in METHODS:
            self.method.addItem(TITLES[key], key)
        self.method.setCurrentIndex(self.method.findData(INTEGRATED_GRADIENTS))
        self.hide_special = QCheckBox("Hide special tokens")
        self.hide_special.setChecked(True)
        self.hide_special.toggled.connect(self._redraw)
        self.explain_button = QPushButton("Explain")
        self.explain_button.setToolTip("Explain both (Ctrl+Enter)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Cancel (Esc)")
        self.cancel_button.setEnabled(False)
        self.progress = ProgressLine()
        self.notes = NotesArea(one_line=True)
        self.legend = QLabel()  # what red and blue mean, for A, B and their difference
        self.legend.setWordWrap(True)
        self.legend.setText(pair_legend(signed=True))
        self.title_a, self.title_b, self.title_diff = QLabel(), QLabel(), QLabel()
        for title in (self.title_a, self.title_b, self.title_diff):
            title.setWordWrap(True)
            title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tokens_a, self.tokens_b, self.tokens_diff = QTextBrowser(), QTextBrowser(), QTextBrowser()
        split = splitter(Qt.Orientation.Horizontal, column(self.title_a, self.tokens_a),
                         column(self.title_b, self.tokens_b))
        layout = QVBoxLayout(self)
        layout.addLayout(row(QLabel("Method:"), self.method, self.explain_button, self.cancel_button, self.hide_special,
                             self.progress))
        layout.addWidget(self.legend)
        layout.addWidget(split, 3)
        layout.addWidget(self.title_diff)
        layout.addWidget(self.tokens_diff, 2)
        layout.addWidget(self.notes)
        self.title_a.setText("A: the pinned input")
        self.title_b.setText("B: the edit")
        self.title_diff.setText("Difference B − A: Explain to see which tokens changed their push")
        self.explain_button.clicked.connect(self.refresh)
        self.cancel_button.clicked.connect(self.cancel)
        QShortcut(QKeySequence("Ctrl+Return"), self, self.refresh)
        self.runner.started.connect(self._started)
        self.runner.finished.connect(self._finished)
        self.runner.progress.connect(self.progress.show_event)
        self.runner.result.connect(self.show_pair)
        self.runner.error.connect(lambda error: self.notes.set_notes([error_note(error)]))
        self.runner.cancelled.connect(lambda: self.notes.set_notes([info("Cancelled.")]))

    def refresh(self) -> None:
        from bertstudio.core.explain.jobs import pinned_pair_job

        try:
            request, task, pinned, edit, self.edit_label = self.source()
            if request is None:
                raise BertStudioError("Load a model first.")
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        self.runner.start(pinned_pair_job, request, task, pinned, edit, self.method.currentData())

    def cancel(self) -> None:
        if self.runner.busy and not self.runner.stop_requested:
            self.runner.cancel()

    def _started(self) -> None:
        self.explain_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.notes.clear()
        self.progress.start()

    def _finished(self) -> None:
        self.explain_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.progress.stop()

    def show_pair(self, pair: Any) -> None:
        self.pair = pair
        self.notes.set_notes(pair.notes)
        self._redraw()

    def _redraw(self, *_args: Any) -> None:
        pair = self.pair
        if pair is None:
            return
        hide = self.hide_special.isChecked()
        a, b = pair.pinned, pair.edit
        shown_a = [(t, v, r) for t, v, r, s in zip(a.tokens, a.attributions, a.rows, a.special, strict=True)
                   if not (hide and s)]
        shown_b = [(t, v, r) for t, v, r, s in zip(b.tokens, b.attributions, b.rows, b.special, strict=True)
                   if not (hide and s)]
        scale = max((abs(v) for _, v, _ in (*shown_a, *shown_b)), default=0.0)  # one scale: colours compare
        self.legend.setText(pair_legend(signed=a.method != "gradient", scale=scale))
        self.title_a.setText(f"<b>A: pinned</b> · {html.escape(pair.name)} of <b>{html.escape(a.target_label)}</b>"
                             f" = {a.score:.4f} · scale ±{scale:.2g}")
        self.title_b.setText(f"<b>B: {html.escape(self.edit_label)}</b> · {html.escape(pair.name)} of "
                             f"<b>{html.escape(b.target_label)}</b> = {b.score:.4f} ({b.score - a.score:+.4f})")
        self.tokens_a.setHtml(tokens_page(token_spans(shown_a, scale)))
        self.tokens_b.setHtml(tokens_page(token_spans(shown_b, scale)))
        aligned = [x for x in pair.aligned if not (hide and x.special)]
        diff_scale = max((abs(x.difference) for x in aligned), default=0.0)
        spans: list[tuple[str, float | None, int]] = [(x.token, x.difference, 0) for x in aligned]
        removed = {i for i, x in enumerate(aligned) if x.edit is None}
        added = {i for i, x in enumerate(aligned) if x.pinned is None}
        self.tokens_diff.setHtml(tokens_page(token_spans(spans, diff_scale, removed, added)))
        moved = sorted(aligned, key=lambda x: -abs(x.difference))[:3]
        words = ", ".join(f"{shown_token(x.token)} {x.difference:+.3f}" for x in moved)
        gone = [shown_token(x.token) for x in aligned if x.edit is None]
        new = [shown_token(x.token) for x in aligned if x.pinned is None]
        extra = (f" · removed: {', '.join(gone)}" if gone else "") + (f" · added: {', '.join(new)}" if new else "")
        self.title_diff.setText(f"<b>Difference B − A</b> (scale ±{diff_scale:.2g}; struck: removed, dashed: added)"
                                f" · largest: {html.escape(words) or '—'}{html.escape(extra)}")


def pair_legend(signed: bool, scale: float = 0.0) -> str:
    """Rich text: the colours of Explain A and B, with swatches from the same colour map as the tokens."""
    def swatch(value: float) -> str:
        colour = colour_of(value, 1.0)
        return f"<span style='background:{colour}; color:{ink_on(colour)}'>&nbsp;&nbsp;&nbsp;&nbsp;</span>"

    amount = f" (A and B on one scale, ±{scale:.2g})" if scale > 0 else " (A and B on one scale)"
    if not signed:  # the gradient norm has no sign: white to red
        return (f"<b>Colours</b>{amount}: {swatch(0.0)} none … {swatch(1.0)} large (this method has no sign). "
                "Difference B − A: red B larger, blue B smaller.")
    return (f"<b>Colours</b>{amount}: {swatch(1.0)} red pushes toward the explained label, {swatch(-1.0)} blue "
            f"pushes against it, {swatch(0.0)} white none. Difference B − A: red the edit pushes more toward "
            "the label than the pinned input, blue less.")
