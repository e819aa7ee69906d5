"""Ranked horizontal bars (best on top) with the value printed at each bar: pyqtgraph.

Probabilities sit on a fixed 0-1 axis (see `ui/plot_style`): a 57.9 % bar fills 58 % of
the width, three near-equal choices look near-equal. A bar compared with another
(`share_scale_with`) uses the pair's common range when it shows values, not probabilities.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from bertstudio.ui import plot_style
from bertstudio.ui.theme import Colors

LONG_LIST = 10  # bars; more get the scale on top as well
ZERO_ROOM = 0.03  # of a value axis' span, beyond 0 when every value has one sign
INSIDE_FROM = 0.8  # a probability label sits inside its bar from here on (room ends at 1.0)
EMPTY_TEXT = "Run (Ctrl+Enter) to see the scores here."


class RankedBars(pg.PlotWidget):
    """`set_items(labels, values)`: one bar per label, in the order given (first on top)."""

    def __init__(self, parent: QWidget | None = None, value_format: str = "{:.1%}", color: str | None = None,
                 probability: bool | None = None) -> None:
        super().__init__(parent)
        self.value_format = value_format
        self._fixed_color = color
        self._role = "a"
        self.probability = ("%" in value_format) if probability is None else probability
        self.partner: RankedBars | None = None
        self.value_range: tuple[float, float] | None = None  # a fixed value axis, whatever the values
        self.labels: list[str] = []
        self.values: np.ndarray = np.zeros(0)
        self._texts: list[pg.TextItem] = []
        self._bars = pg.BarGraphItem(x0=[], y=[], height=0.7, width=[], brush=self.color, pen=None)
        self.addItem(self._bars)
        self.empty_text = EMPTY_TEXT  # said, with no axes, while there are no bars (a view may say its own)
        self.placeholder = pg.TextItem(self.empty_text, anchor=(0.5, 0.5))
        self.addItem(self.placeholder)
        item = self.getPlotItem()
        item.invertY(True)
        item.hideButtons()
        item.setMouseEnabled(False, False)
        item.setMenuEnabled(False)
        item.getAxis("bottom").setLabel("probability")
        plot_style.style_plot(self)
        self._scale()
        item.getAxis("left").setTicks([[]])  # no labels yet: no -0.4..0.4 numbers either
        self.setYRange(0.0, 1.0, padding=0)
        self._show_empty()
        self.setMinimumHeight(120)

    @property
    def color(self) -> str:
        if self._fixed_color:
            return self._fixed_color
        colors = plot_style.theme.colors()
        return colors.series_b if self._role == "b" else colors.series_a

    def set_role(self, role: str) -> None:
        """"a" or "b": which model's theme colour the bars take."""
        self._role = role
        self._bars.setOpts(brush=self.color)

    def set_probability(self, probability: bool, axis_label: str | None = None) -> None:
        """Fixed 0-1 axis (probabilities) or a value axis (regression heads) from the values."""
        self.probability = probability
        if axis_label:
            self.getPlotItem().getAxis("bottom").setLabel(axis_label)
        self._scale()
        self._place_texts()
        self._show_empty()

    def share_scale_with(self, other: RankedBars) -> None:
        """Both show one range (A and B of a comparison)."""
        self.partner, other.partner = other, self

    def set_items(self, labels: Sequence[str], values: Sequence[float], tooltips: Sequence[str] = ()) -> None:
        self.labels = list(labels)
        self.values = np.asarray(values, dtype=float)
        count = len(self.labels)
        y = np.arange(count, dtype=float)
        self._bars.setOpts(x0=np.zeros(count), y=y, width=self.values, height=0.7, brush=self.color)
        for text in self._texts:
            self.removeItem(text)
        self._texts = [pg.TextItem(plot_style.format_value(float(value), self.value_format), anchor=(0, 0.5))
                       for value in self.values]
        for text in self._texts:
            self.addItem(text)
        axis = self.getPlotItem().getAxis("left")
        axis.setTicks([[(float(i), label) for i, label in enumerate(self.labels)]])
        self._scale()
        if self.partner is not None and not self.probability:
            self.partner.rescale()
        self._place_texts()
        self.setYRange(-0.6, max(count, 1) - 0.4, padding=0)
        self._show_empty()
        self.setToolTip("\n".join(tooltips))
        self.setMinimumHeight(40 + 24 * max(count, 1))

    def x_range(self) -> tuple[float, float]:
        """The value axis' range: 0-1 for probabilities, a fixed `value_range` (cosines: -1..1), else
        shared with the partner."""
        if self.probability:
            return 0.0, 1.0
        if self.value_range is not None:
            return self.value_range
        shared = self.partner is not None and not self.partner.probability  # a classifier's probabilities
        lists = [self.values] + ([self.partner.values] if shared and self.partner is not None else [])
        low, high = plot_style.shared_value_range(*lists)  # never stretched to a classifier's probabilities
        # 0 just inside the axis, not on its edge (where pyqtgraph drew no "0" tick): the score's sign shows
        room = ZERO_ROOM * (high - low)
        return (-room if low == 0.0 else low), (room if high == 0.0 else high)

    def rescale(self) -> None:
        """Range and value labels again: the partner's shared scale changed with our values."""
        self._scale()
        self._place_texts()

    def _scale(self) -> None:
        low, high = self.x_range()
        item = self.getPlotItem()
        # A long list (27 topics) scrolls: the scale is repeated on top so it is always in sight.
        item.showAxis("top", len(self.labels) > LONG_LIST)
        for side in ("bottom", "top") if len(self.labels) > LONG_LIST else ("bottom",):
            label = item.getAxis("bottom").labelText
            if not self.labels:  # nothing drawn: no quarter guide lines either (the axes are hidden)
                plot_style.value_axis(self, 0.0, 1.0, side, label)
            elif self.probability:
                plot_style.probability_axis(self, side, label)
            else:
                plot_style.value_axis(self, low, high, side, label)
                # a range starting at 0 put the "0" at the edge, where pyqtgraph dropped it: keep it
                item.getAxis(side).setStyle(hideOverlappingLabels=False)
                item.setContentsMargins(0, 0, 10, 0)
        item.getAxis("top").showLabel(False)

    def _show_empty(self) -> None:
        """No bars: no axes (a 0-1 or 0.1..1.1 scale of nothing), a plain sentence in their place."""
        empty = not self.labels
        item = self.getPlotItem()
        for side in ("left", "bottom"):
            item.showAxis(side, not empty)
        if empty:
            item.showAxis("top", False)
            (left, right), (top, bottom) = item.getViewBox().viewRange()
            self.placeholder.setText(self.empty_text, color=plot_style.theme.colors().foreground)
            self.placeholder.setPos((left + right) / 2, (top + bottom) / 2)
        self.placeholder.setVisible(empty)

    def _place_texts(self) -> None:
        """Each value after its bar; inside the bar's end where the axis ends right after it."""
        colors = plot_style.theme.colors()
        low, high = self.x_range()
        for row, (text, value) in enumerate(zip(self._texts, self.values, strict=False)):
            inside = self.probability and value >= INSIDE_FROM or (
                not self.probability and value > 0 and value > high - 0.12 * (high - low))
            text.setAnchor((1.04, 0.5) if inside else (-0.06, 0.5) if value >= 0 else (1.06, 0.5))
            text.setColor(colors.inside_text if inside else colors.foreground)
            text.setPos(float(value), float(row))

    def apply_theme(self, colors: Colors) -> None:  # called by plot_style on a theme change
        self._bars.setOpts(brush=self.color)
        self._place_texts()
        self.placeholder.setColor(colors.foreground)
