"""Compare two models on the same input: the "Compare with…" source and side-by-side ranked bars.

`CompareSource` picks the second model (both run in the tab's one worker job); `CompareBars`
shows model A and model B next to each other, B's labels marked with their score change and
the changed top-1 called out. Any task whose output is a ranked list can use both.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from bertstudio.core.quantize import split_variant, variant_source
from bertstudio.ui import theme
from bertstudio.ui.widgets.forms import browse_button
from bertstudio.ui.widgets.labelled_matrix import short

if TYPE_CHECKING:
    from bertstudio.ui.widgets.ranked_bars import RankedBars

COLOR_A = "#3f6fc4"  # model A (= theme.LIGHT.series_a; plots take the theme's colour)
COLOR_B = "#d0703f"  # model B
MAX_LABEL_CHARS = 48
PINNED = "pinned"  # source_a of an edit compared with its pin (core.jobs.Outcome.first_source)
PROBABILITY_AXIS = "probability (0 to 1)"
REGRESSION_AXIS = "regression score (not a probability; 0 marked)"
REGRESSION_FORMAT = "{:.4g}"
SCALES_DIFFER = ("<b>Different scales:</b> one side is a regression score, the other probabilities (0 to 1): "
                 "their bars and top labels do not compare.")


def fit_labels(bars: RankedBars, labels: Sequence[str]) -> None:
    """Make the label axis wide enough for its labels (pyqtgraph drops tick texts that do not fit)."""
    axis = bars.getPlotItem().getAxis("left")
    metrics = QFontMetrics(axis.style.get("tickFont") or bars.font())
    axis.setWidth(min(420, max((metrics.horizontalAdvance(label) for label in labels), default=0) + 18))


class CompareSource(QWidget):
    """A checkbox and a second model source; `source()` is None unless comparing is on."""

    def __init__(self, suggestions: QComboBox | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._suggestions = suggestions
        self.enabled = QCheckBox("Compare with…")
        self.enabled.setToolTip("Run a second model on the same input and show both results side by side")
        self.combo = QComboBox(editable=True)
        self.combo.setMinimumWidth(200)
        line = self.combo.lineEdit()  # an editable combo's own
        if line is not None:
            line.setPlaceholderText("second model: Hub id or local folder")
        self.combo.setEnabled(False)
        self.browse = browse_button(self.set_source, "Choose the model to compare with", folder=True, text="Folder…")
        self.browse.setEnabled(False)
        self.int8 = QCheckBox("int8")  # B is the model quantized (core/quantize.py): the same model shows the gain
        self.int8.setToolTip("Compare with this model dynamically quantized to int8 on the CPU (name the same "
                             "model as A to see size, speed and agreement side by side)")
        self.int8.setEnabled(False)
        self.int8.toggled.connect(self._int8_toggled)
        self.enabled.toggled.connect(self._toggled)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.enabled)
        row.addWidget(self.combo, 1)
        row.addWidget(self.browse)
        row.addWidget(self.int8)

    def _int8_toggled(self, on: bool) -> None:
        if on and not self.combo.currentText().strip() and self._suggestions is not None:
            self.combo.setEditText(self._suggestions.currentText())  # the same model as A, quantized

    def _toggled(self, on: bool) -> None:
        self.combo.setEnabled(on)
        self.browse.setEnabled(on)
        self.int8.setEnabled(on)
        if on and self._suggestions is not None and self.combo.count() == 0:
            text = self.combo.currentText()
            for i in range(self._suggestions.count()):  # the model bar's local models
                self.combo.addItem(self._suggestions.itemText(i), self._suggestions.itemData(i))
            self.combo.setEditText(text)

    def set_source(self, source: str | None) -> None:
        """Turn comparing on with `source` ('SRC [int8]' ticks int8), or off with None."""
        plain, quantize = split_variant(source or "")
        self.enabled.setChecked(bool(source))
        self.combo.setEditText(plain)
        self.int8.setChecked(bool(quantize))

    def source(self) -> str | None:
        """The second model, 'SRC [int8]' when int8 is ticked; None unless comparing is on."""
        plain = self.plain_source()
        return variant_source(plain, "int8" if self.int8.isChecked() else None) if plain else None

    def plain_source(self) -> str | None:
        if not self.enabled.isChecked():
            return None
        index = self.combo.currentIndex()
        if index >= 0 and self.combo.itemText(index) == self.combo.currentText() and self.combo.itemData(index):
            return str(self.combo.itemData(index))
        return self.combo.currentText().strip() or None


def short_source(source: str, limit: int = 48) -> str:
    """A model source cut from the left (its end names it)."""
    return source if len(source) <= limit else "…" + source[-(limit - 1):]


class CompareBars(QWidget):
    """Model A's bars, and when comparing, model B's bars beside them with the differences marked."""

    def __init__(self, value_format: str = "{:.1%}", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title_a = QLabel()
        self.title_b = QLabel()
        from bertstudio.ui.widgets.ranked_bars import RankedBars  # pyqtgraph: not needed before a result

        self.bars_a = RankedBars(value_format=value_format)
        self.bars_b = RankedBars(value_format=value_format)
        self.bars_b.set_role("b")
        self.bars_a.share_scale_with(self.bars_b)  # A and B on one scale, always
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        column_a, column_b = QVBoxLayout(), QVBoxLayout()
        column_a.addWidget(self.title_a)
        column_a.addWidget(self.bars_a, 1)
        column_a.addStretch(0)  # takes the room a capped (shorter) list leaves, so the bars stay on top
        column_b.addWidget(self.title_b)
        column_b.addWidget(self.bars_b, 1)
        column_b.addStretch(0)
        column_b.setContentsMargins(0, 0, 0, 0)  # a widget's layout has margins: B's title sat 9 px below A's
        self.side_b = QWidget()
        self.side_b.setLayout(column_b)
        holder = QWidget()
        sides = QHBoxLayout(holder)
        sides.setContentsMargins(0, 0, 0, 0)
        sides.addLayout(column_a, 1)
        sides.addWidget(self.side_b, 1)
        scroll = QScrollArea()  # many labels (27 topics) keep their height and scroll
        scroll.setWidgetResizable(True)
        scroll.setWidget(holder)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.summary)
        self.side_b.setVisible(False)
        self.summary.setVisible(False)

    def set_value_format(self, value_format: str, axis_label: str, probability: bool | None = None) -> None:
        """Probabilities ("%" formats, unless told) on 0-1; other values (regression) on a value axis."""
        for bars in (self.bars_a, self.bars_b):
            bars.value_format = value_format
            bars.set_probability("%" in value_format if probability is None else probability, axis_label)

    def set_regression(self, a: bool, b: bool | None = None) -> None:
        """Each side's own scale (`b` None: as A): a classifier's probabilities on 0-1, a regression
        head's score on its own value axis with 0 marked; a regression model compared with a
        classifier never draws the probabilities on a value axis, nor shares its range with them."""
        for bars, regression in ((self.bars_a, a), (self.bars_b, a if b is None else b)):
            bars.value_format = REGRESSION_FORMAT if regression else "{:.1%}"
            bars.set_probability(not regression, REGRESSION_AXIS if regression else PROBABILITY_AXIS)

    def hide_b(self) -> None:
        """Model A's bars alone: no titles, no B, no summary of the two."""
        for widget in (self.title_a, self.side_b, self.summary):
            widget.setVisible(False)

    def show_one(self, labels: Sequence[str], values: Sequence[float], tooltips: Sequence[str] = ()) -> None:
        self.hide_b()
        shown = [short(label, MAX_LABEL_CHARS) for label in labels]
        fit_labels(self.bars_a, shown)
        self.bars_a.set_items(shown, values, tooltips or labels)

    def show_two(
        self,
        source_a: str,
        source_b: str,
        a: tuple[Sequence[str], Sequence[float]],
        b: tuple[Sequence[str], Sequence[float]],
        diff: Any,
    ) -> None:
        """`diff` is a core.compare.RankingDiff of A -> B; B's labels carry their change."""
        self.title_a.setText(f"<b style='color:{self.bars_a.color}'>A</b> {html.escape(short_source(source_a))}")
        self.title_b.setText(f"<b style='color:{self.bars_b.color}'>B</b> {html.escape(short_source(source_b))}")
        self.title_a.setVisible(True)
        shown_a = [short(label, MAX_LABEL_CHARS) for label in a[0]]
        fit_labels(self.bars_a, shown_a)
        self.bars_a.set_items(shown_a, a[1], a[0])
        other_labels = bool(getattr(diff, "labels_note", ""))  # another classifier's labels: nothing is "new"
        # different scales (a regression score beside probabilities): a difference would mean nothing
        same_scale = self.bars_a.probability == self.bars_b.probability
        # an edit beside its pin (the same model, the same labels): one order, A's, so a label keeps its
        # row; two models keep each its own ranking (B's top-1 on top, its labels may be others)
        labels_b, values_b = in_order_of(a[0], b[0], b[1]) if source_a == PINNED else (list(b[0]), list(b[1]))
        marked = []
        for label in labels_b:
            delta = diff.delta_of(label) if same_scale else None
            change = delta.delta if delta is not None else None
            shown = short(label, MAX_LABEL_CHARS)
            marked.append(f"{shown} ({change:+.1%})" if change is not None and abs(change) >= 0.0005
                          else shown if change is not None or other_labels or not same_scale else f"{shown} (new)")
        fit_labels(self.bars_b, marked)
        self.bars_b.set_items(marked, values_b, labels_b)
        # Each side as tall as its own labels need: two labels beside 27 are two bars with their own
        # scale in sight, not two bars stretched to the height of the longer list (scale scrolled away).
        uneven = len(a[0]) != len(b[0])
        for bars in (self.bars_a, self.bars_b):
            bars.setMaximumHeight(bars.minimumHeight() + 40 if uneven else 16_777_215)
        self.side_b.setVisible(True)
        self.summary.setText(ranking_summary(diff) if same_scale else SCALES_DIFFER)
        self.summary.setVisible(True)


def in_order_of(order: Sequence[str], labels: Sequence[str], values: Sequence[float]) -> tuple[
        list[str], list[float]]:
    """`labels` (with their values) in the order of `order` (A's ranking), so a label sits on the
    same row on both sides; labels A has not come after, in their own order."""
    rank = {label: i for i, label in enumerate(order)}
    pairs = sorted(zip(labels, values, strict=True), key=lambda pair: rank.get(pair[0], len(rank)))
    return [label for label, _ in pairs], [float(value) for _, value in pairs]


def ranking_summary(diff: Any) -> str:
    """Rich text: whether the top-1 changed, and the largest score changes (or why they do not compare)."""
    note = getattr(diff, "labels_note", "")
    if note:
        return (f"<b>Different labels:</b> {html.escape(note)} Top label: A {html.escape(str(diff.top_a))}, "
                f"B {html.escape(str(diff.top_b))}.")
    if diff.top_changed:
        head = (f"<b style='color:{theme.colors().error}'>Top-1 changed:</b> {html.escape(str(diff.top_a))} → "
                f"{html.escape(str(diff.top_b))}")
    else:
        head = f"Top-1 unchanged: {html.escape(str(diff.top_a))}"
    changed = [d for d in diff.deltas if d.delta is not None]
    moves = [d for d in changed if abs(d.delta) >= 0.0005][:3]  # "-0.0%" would say nothing
    details = ", ".join(f"{html.escape(d.label)} {d.delta:+.1%}" for d in moves)
    if details:
        return head + f" · largest score changes (B − A): {details}"
    return head + (" · every score changed by less than 0.1 %" if changed else "")
