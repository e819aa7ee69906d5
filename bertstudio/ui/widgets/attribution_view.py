"""Token attributions: the tokens coloured on a diverging scale, a sortable table, export.

Blue is against the target, red for it, white none; the scale is symmetric around 0 (±the
largest |attribution| of the shown tokens) so the colour of a token means the same on both
sides. The gradient-norm method has no sign: its scale runs from white to red.
"""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from bertstudio.ui.theme import ink_on

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

        bar = QHBoxLayout()
        bar.addWidget(self.summary, 1)
        for widget in (self.legend, self.hide_special, self.csv_button, self.json_button):
            bar.addWidget(widget)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.tokens)
        split.addWidget(self.table)
        split.setSizes([640, 360])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(split, 1)
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
        pieces, row = [], None
        for i in shown:
            if row is not None and e.rows[i] != row:
                pieces.append("<br><br>")
            row = e.rows[i]
            token = e.tokens[i]
            glue = token.startswith("##")
            text = html.escape(shown_token(token[2:] if glue else token))
            colour = colour_of(e.attributions[i], scale)
            ink = "white" if scale > 0 and abs(e.attributions[i]) > 0.6 * scale else "black"
            pieces.append(("" if glue else " ") + f'<span style="background:{colour}; color:{ink}; padding:2px;" '
                          f'title="{e.attributions[i]:+.5f}">{text}</span>')
        self.tokens.setHtml(f'<div style="font-size:15px; line-height:200%;">{"".join(pieces)}</div>')
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
        Path(path).write_text(json.dumps(self.explanation.to_json(), ensure_ascii=False, indent=2), encoding="utf-8")

    def _export(self, kind: str) -> None:
        if self.explanation is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export attributions", f"attributions.{kind}",
                                              "CSV (*.csv)" if kind == "csv" else "JSON (*.json)")
        if path:
            (self.save_csv if kind == "csv" else self.save_json)(path)
