"""A feature's card on the Features tab: its top-activating corpus contexts (the corpus page's table,
the matched token in bold), the histogram of its values on the corpus, the tokens its decoder
direction promotes through the MLM head (a masked LM), and the task's answer with the feature
ablated or scaled beside the intact one (A intact, B edited)."""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDoubleSpinBox, QLabel, QPushButton, QTableWidgetItem, QTextEdit, QVBoxLayout, QWidget

from bertstudio.ui import plot_style
from bertstudio.ui.widgets.attention_corpus import context_html
from bertstudio.ui.widgets.forms import spin_box
from bertstudio.ui.widgets.head_importance_view import summary_of
from bertstudio.ui.widgets.layouts import row, splitter
from bertstudio.ui.widgets.ranked_bars import RankedBars
from bertstudio.ui.widgets.rich_text_table import HTML_ROLE, context_table

COLUMNS = ("Value", "Token", "Line", "Context")


EMPTY_TEXT = "Show a feature to see its values on the corpus here."


class Histogram(pg.PlotWidget):
    """A feature's values on the corpus tokens it fires on, in equal bins from 0 to its largest."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bars = pg.BarGraphItem(x0=[], x1=[], height=[], y0=0, brush=plot_style.theme.colors().series_a, pen=None)
        self.addItem(self.bars)
        item = self.getPlotItem()
        item.hideButtons()
        item.setMouseEnabled(False, False)
        item.setMenuEnabled(False)
        item.getAxis("bottom").setLabel("feature value")
        item.getAxis("left").setLabel("tokens")
        plot_style.style_plot(self)
        self.setMinimumHeight(110)
        self.counts: tuple[int, ...] = ()
        # before a feature is shown (or for one that never fires): a sentence, not empty axes (issue 29 #21)
        self.empty = pg.TextItem(EMPTY_TEXT, anchor=(0.5, 0.5))
        self.addItem(self.empty)
        self.show_empty()  # not `clear`: PlotWidget binds PlotItem.clear on the instance

    def _show_axes(self, shown: bool) -> None:
        item = self.getPlotItem()
        for side in ("left", "bottom"):
            item.showAxis(side, shown)
        self.empty.setVisible(not shown)

    def show_empty(self, text: str = EMPTY_TEXT) -> None:
        """No bars: say what comes here instead."""
        from bertstudio.ui import theme

        self.counts = ()
        self.bars.setOpts(x0=[], x1=[], height=[])
        plot_style.set_title(self, "")
        self.empty.setText(text)
        self.empty.setColor(theme.colors().foreground)
        self._show_axes(False)
        self.empty.setPos(0.5, 0.5)
        self.getPlotItem().setRange(xRange=(0, 1), yRange=(0, 1), padding=0)

    def show_counts(self, counts: tuple[int, ...], largest: float) -> None:
        if not counts or largest <= 0:
            self.show_empty("This feature never fires on the corpus.")
            return
        self.counts = counts
        self._show_axes(True)
        edges = np.linspace(0.0, largest, len(counts) + 1)
        self.bars.setOpts(x0=edges[:-1], x1=edges[1:], height=np.asarray(counts, float), y0=0)
        self.setXRange(0.0, largest, padding=0.02)
        self.setYRange(0.0, max(counts) * 1.05 or 1.0, padding=0)
        plot_style.set_title(self, f"{sum(counts):,} corpus tokens, values 0 to {largest:.3g}")


class FeatureCardView(QWidget):
    show_requested = Signal(int)  # a feature number
    intervene_requested = Signal(int, float)  # feature, scale (0: ablate)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.card: Any = None
        self.feature = spin_box(0, 0, prefix="feature ")
        self.show_button = QPushButton("Show")
        self.show_button.clicked.connect(lambda: self.show_requested.emit(self.feature.value()))
        self.summary = QLabel("Open an SAE, then pick a feature (or click one on the Tokens page).")
        self.summary.setWordWrap(True)
        self.table = context_table(COLUMNS)
        self.histogram = Histogram()
        self.promoted = RankedBars(value_format="{:+.2f}", probability=False)
        self.promoted.set_probability(False, "logit change")
        plot_style.set_title(self.promoted, "promotes (MLM head)")
        plots = QWidget()
        side = QVBoxLayout(plots)
        side.setContentsMargins(0, 0, 0, 0)
        side.addWidget(self.histogram, 1)
        side.addWidget(self.promoted, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(row(self.feature, self.show_button, self.summary, stretch=self.summary))
        layout.addWidget(splitter(pg.QtCore.Qt.Orientation.Horizontal, self.table, plots, sizes=(600, 300)), 3)
        self._build_intervention(layout)

    def _build_intervention(self, layout: QVBoxLayout) -> None:
        """The scale, "Run the task with it", and the intact (A) and edited (B) answers."""
        self.scale = QDoubleSpinBox()
        self.scale.setRange(-10.0, 10.0)
        self.scale.setSingleStep(0.5)
        self.scale.setValue(0.0)
        self.scale.setPrefix("× ")
        self.scale.setToolTip("The feature's part of the layer's state times this in the forward (0: ablated)")
        self.intervene_button = QPushButton("Run the task with it")
        self.intervene_button.setToolTip("The task on the text above, intact (A) and with this feature scaled (B)")
        self.intervene_button.clicked.connect(lambda: self.intervene_requested.emit(self.feature.value(),
                                                                                    self.scale.value()))
        self.intact = QTextEdit()
        self.edited = QTextEdit()
        for box, title in ((self.intact, "A intact"), (self.edited, "B edited")):
            box.setReadOnly(True)
            box.setPlaceholderText(title)
        self.difference = QLabel("")
        self.difference.setWordWrap(True)
        answers = splitter(pg.QtCore.Qt.Orientation.Horizontal, self.intact, self.edited)
        answers.setMinimumHeight(90)
        layout.addLayout(row("Scale", self.scale, self.intervene_button, self.difference, stretch=self.difference))
        layout.addWidget(answers, 1)

    def set_features(self, count: int) -> None:
        self.feature.setRange(0, max(0, count - 1))

    def show_card(self, card: Any) -> None:
        self.card = card
        self.feature.setValue(card.feature)
        dead = " (dead on the corpus)" if not card.contexts else ""
        self.summary.setText(f"Feature {card.feature} fires on {card.frequency:.2%} of the corpus tokens, largest "
                             f"value {card.largest:.3f}{dead}. " + " ".join(n.text for n in card.notes))
        self.table.setRowCount(len(card.contexts))
        for index, neighbour in enumerate(card.contexts):
            items = (QTableWidgetItem(f"{neighbour.score:.3f}"), QTableWidgetItem(neighbour.token),
                     QTableWidgetItem(str(neighbour.line)), QTableWidgetItem(neighbour.context))
            items[3].setData(HTML_ROLE, context_html(neighbour))
            items[3].setToolTip(neighbour.context)
            for column, item in enumerate(items):
                self.table.setItem(index, column, item)
        self.histogram.show_counts(card.histogram, card.largest)
        labels = [html.unescape(token) for token, _ in card.promoted]
        values = [value for _, value in card.promoted]
        self.promoted.set_items(labels, values)
        self.promoted.setVisible(bool(card.promoted))

    def clear_card(self) -> None:
        self.card = None
        self.table.setRowCount(0)
        self.histogram.show_empty()
        self.promoted.set_items([], [])
        self.clear_intervention()

    def show_intervention(self, outcome: Any, summary: Any) -> None:
        self.intact.setHtml(f"<pre>{html.escape(summary_of(summary, outcome.result))}</pre>")
        self.edited.setHtml(f"<b>{html.escape(outcome.second_source)}</b>"
                            f"<pre>{html.escape(summary_of(summary, outcome.second))}</pre>")
        self.difference.setText(_difference(outcome.diff))

    def clear_intervention(self) -> None:
        self.intact.clear()
        self.edited.clear()
        self.difference.setText("")


def _difference(diff: Any) -> str:
    """A line on what changed: the first place, where the task's comparison says."""
    first = diff[0] if isinstance(diff, (list, tuple)) and diff else diff
    if first is None:
        return ""
    top_a, top_b = getattr(first, "top_a", None), getattr(first, "top_b", None)
    if top_a is None:
        return ""
    return f"Top answer changed: {top_a} → {top_b}" if top_a != top_b else f"Top answer unchanged: {top_a}"
