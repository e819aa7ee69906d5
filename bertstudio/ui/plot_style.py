"""One set of plot conventions for every pyqtgraph plot in the app.

- probabilities on a fixed 0-1 axis (57.9 % fills 58 % of the width, never all of it);
- compared models on one shared scale (`shared_value_range`);
- no SI prefixes ("x0.001") on any axis;
- value labels that never round a real probability to "0.0 %" ("<0.1 %");
- legends outside the data (in the title row);
- the theme's colours, re-applied when the theme changes.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable, Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt

from bertstudio.ui import theme

# The end ticks sit a hair inside 0 and 1: pyqtgraph drops a tick that rounds past the view.
PROBABILITY_TICKS = [(1e-6, "0"), (0.25, "0.25"), (0.5, "0.5"), (0.75, "0.75"), (1 - 1e-6, "1")]
AXES = ("left", "bottom", "right", "top")

_STYLED: weakref.WeakSet[pg.GraphicsView] = weakref.WeakSet()
_CALLBACKS: weakref.WeakKeyDictionary[pg.GraphicsView, weakref.WeakMethod[Callable[[theme.Colors], None]]] = (
    weakref.WeakKeyDictionary())
# What this module drew on a plot and re-colours on a theme change, kept here rather than as
# attributes set on pyqtgraph's objects; weak keys, so a closed plot leaves no entry behind.
_GUIDES: weakref.WeakKeyDictionary[pg.GraphicsView, list[pg.InfiniteLine]] = weakref.WeakKeyDictionary()
_LEGENDS: weakref.WeakKeyDictionary[pg.GraphicsView, list[tuple[str, str, str]]] = weakref.WeakKeyDictionary()
_CONNECTED = False


def format_probability(p: float) -> str:
    """57.9 %; tiny values as "<0.1 %" and near-certain ones as ">99.9 %" (never a false 0 or 100)."""
    if not math.isfinite(p):
        return "–"
    if p <= 0.0:
        return "0 %"
    if p < 0.0005:
        return "<0.1 %"
    if p >= 1.0:
        return "100 %"
    if p > 0.9995:
        return ">99.9 %"
    return f"{p * 100:.1f} %"


def format_value(value: float, value_format: str) -> str:
    """Format a bar's value; a percentage format goes through `format_probability`."""
    if "%" in value_format:
        return format_probability(value)
    return value_format.format(value)


def no_si_prefix(plot: pg.PlotWidget | pg.PlotItem) -> None:
    item = plot.getPlotItem() if isinstance(plot, pg.PlotWidget) else plot
    for name in AXES:
        axis = item.getAxis(name)
        axis.enableAutoSIPrefix(False)


def probability_axis(plot: pg.PlotWidget, axis: str = "bottom", label: str = "probability") -> None:
    """A fixed 0-1 axis with quarter ticks and guide lines; the view cannot pan or zoom past it."""
    item = plot.getPlotItem()
    horizontal = axis in ("bottom", "top")
    item.getAxis(axis).setTicks([PROBABILITY_TICKS])
    item.getAxis(axis).setStyle(hideOverlappingLabels=False)  # keep the "0" and "1" at the ends
    item.getAxis(axis).setLabel(label)
    # pyqtgraph's own grid clips the end tick labels; guide lines at the quarters instead.
    item.showGrid(**{"x" if horizontal else "y": False})
    _guides(plot, horizontal, visible=True)
    if horizontal:
        item.setContentsMargins(0, 0, 10, 0)  # room for the "1" at the right end
        item.setXRange(0.0, 1.0, padding=0)
    else:
        item.setYRange(0.0, 1.0, padding=0)


def value_axis(plot: pg.PlotWidget, low: float, high: float, axis: str = "bottom", label: str = "value") -> None:
    """A value (regression score, loss) axis from `low` to `high`, automatic ticks, no prefix."""
    item = plot.getPlotItem()
    horizontal = axis in ("bottom", "top")
    item.getAxis(axis).setTicks(None)
    item.getAxis(axis).setLabel(label)
    _guides(plot, horizontal, visible=False)
    item.showGrid(**{"x" if horizontal else "y": True}, alpha=0.2)
    if horizontal:
        item.setXRange(low, high, padding=0)
    else:
        item.setYRange(low, high, padding=0)


class StepAxis(pg.AxisItem):
    """An axis of whole steps: ticks at integers only (no "1.5" step), never an SI prefix."""

    def __init__(self, orientation: str = "bottom", **kwargs: object) -> None:
        super().__init__(orientation, **kwargs)
        self.enableAutoSIPrefix(False)

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:  # noqa: N803
        levels = super().tickSpacing(minVal, maxVal, size)
        whole = [(spacing, offset) for spacing, offset in levels if spacing >= 1 and float(spacing).is_integer()]
        return whole or [(1.0, 0.0)]


def step_axis(plot: pg.PlotWidget, axis: str = "bottom", label: str = "step") -> None:
    """Whole-number ticks on a step axis; the view starts at step 0 (one point at step 1 showed -10..11)."""
    item = plot.getPlotItem()
    item.setAxisItems({axis: StepAxis(axis)})
    item.setLabel(axis, label)
    item.getViewBox().setLimits(xMin=0.0)


def _guides(plot: pg.PlotWidget, horizontal: bool, visible: bool) -> None:
    lines = _GUIDES.get(plot)
    if lines is None and not visible:
        return
    if lines is None:
        pen = pg.mkPen(theme.colors().muted, width=1, style=Qt.PenStyle.DotLine)
        lines = [pg.InfiniteLine(value, angle=90 if horizontal else 0, pen=pen, movable=False)
                 for value in (0.25, 0.5, 0.75)]
        for line in lines:
            line.setZValue(-10)
            plot.addItem(line, ignoreBounds=True)
        _GUIDES[plot] = lines
    for line in lines:
        line.setVisible(visible)


def align_axes(plots: Sequence[pg.PlotWidget], side: str = "left") -> None:
    """One width for the label axis of plots stacked in a column, so that their value axes line up."""
    axes = [plot.getPlotItem().getAxis(side) for plot in plots]
    widths = [axis.fixedWidth if axis.fixedWidth is not None else axis.width() for axis in axes]
    if axes:
        width = int(max(widths))
        for axis in axes:
            axis.setWidth(width)


def shared_value_range(*value_lists: Iterable[float]) -> tuple[float, float]:
    """One range for every list (A and B): zero included, room for the printed values."""
    values = [float(v) for values in value_lists for v in values if math.isfinite(float(v))]
    low, high = min(values + [0.0]), max(values + [0.0])
    if high == low:
        high = low + 1.0
    span = high - low
    return (low - 0.25 * span if low < 0 else 0.0), (high + 0.15 * span if high > 0 else 0.0)


def legend_outside(plot: pg.PlotWidget, entries: Sequence[tuple[str, str, str]]) -> None:
    """A legend in the title row, above the data: entries are (name, colour, marker)."""
    _LEGENDS[plot] = list(entries)  # re-drawn on theme change
    colors = theme.colors()
    parts = [f"<span style='color:{colour}'>{marker}</span>&nbsp;"
             f"<span style='color:{colors.foreground}'>{name}</span>" for name, colour, marker in entries]
    plot.getPlotItem().setTitle("&nbsp;&nbsp;&nbsp;".join(parts), size="9pt")


def set_title(plot: pg.PlotWidget | pg.PlotItem, text: str, size: str = "9pt") -> None:
    """A plot title in the theme's text colour (restyled with the theme)."""
    item = plot.getPlotItem() if isinstance(plot, pg.PlotWidget) else plot
    item.setTitle(text or None, size=size, color=theme.colors().foreground)


def style_plot(plot: pg.GraphicsView, on_theme: Callable[[theme.Colors], None] | None = None) -> None:
    """Theme colours, no SI prefix, and a restyle whenever the theme changes.

    Any pyqtgraph view: a PlotWidget, a GraphicsLayoutWidget (every PlotItem and axis in it,
    colour bars included), a bare GraphicsView. Call it once, after the items are added; a
    view with an `apply_theme(colors)` method gets it called too, for its own items, and so does
    `on_theme` (a bound method of the widget that holds the view; kept weakly)."""
    global _CONNECTED
    if on_theme is not None:
        _CALLBACKS[plot] = weakref.WeakMethod(on_theme)
    for item in _plot_items(plot):
        no_si_prefix(item)
    _apply(plot)
    _STYLED.add(plot)
    if not _CONNECTED:
        theme.manager().changed.connect(lambda _scheme: restyle_all())
        _CONNECTED = True


style_view = style_plot  # the name for views that are not a PlotWidget


def background_of(view: pg.GraphicsView) -> str:
    """The colour a view paints behind its items ("#rrggbb"), for tests and the walkthrough."""
    return view.backgroundBrush().color().name()


def _plot_items(view: pg.GraphicsView) -> list[pg.PlotItem]:
    if isinstance(view, pg.PlotWidget):
        return [view.getPlotItem()]
    scene = view.scene()
    return [item for item in scene.items() if isinstance(item, pg.PlotItem)] if scene is not None else []


def _axes(view: pg.GraphicsView) -> list[pg.AxisItem]:
    """Every axis in the view: the plots' and the colour bars'."""
    scene = view.scene()
    return [item for item in scene.items() if isinstance(item, pg.AxisItem)] if scene is not None else []


def _apply(plot: pg.GraphicsView) -> None:
    colors = theme.colors()
    plot.setBackground(colors.background)
    for axis in _axes(plot):
        axis.setPen(pg.mkPen(colors.muted))
        axis.setTextPen(pg.mkPen(colors.foreground))
        if axis.label is not None and axis.labelText:
            axis.setLabel(axis.labelText, units=axis.labelUnits, color=colors.foreground)
    for item in _plot_items(plot):
        title = item.titleLabel
        if title is not None and title.text and not _LEGENDS.get(plot):
            title.setText(title.text, color=colors.foreground)
    for line in _GUIDES.get(plot, ()):
        line.setPen(pg.mkPen(colors.muted, width=1, style=Qt.PenStyle.DotLine))
    entries = _LEGENDS.get(plot)
    if entries:
        legend_outside(plot, entries)
    restyle = getattr(plot, "apply_theme", None)
    if callable(restyle):
        restyle(colors)
    callback = _CALLBACKS.get(plot)
    method = callback() if callback is not None else None
    if method is not None:
        method(colors)


def restyle_all() -> None:
    for plot in list(_STYLED):
        try:
            if isinstance(plot, pg.PlotWidget) and plot.getPlotItem() is None:  # closed: no plot item
                raise RuntimeError("closed")
            _apply(plot)
        except (RuntimeError, AttributeError):  # closed, or its C++ object is gone
            _STYLED.discard(plot)
