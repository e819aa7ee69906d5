"""Live training curves: loss (raw + smoothed, eval points), learning rate over its plan, eval metrics.

pyqtgraph's live-plot recipe: one PlotDataItem per curve, fed with numpy arrays through
`setData`; points arrive at every step but the items are redrawn at most ~10 times a second.
Conventions: legends sit in the plot titles (outside the data, never clipped), no SI
prefixes on any axis, whole-number step ticks, validation metrics (accuracies, F1) on a fixed 0-1
axis that becomes -1..1 once a correlation (Pearson, Spearman) or a negative score arrives, and the
learning-rate plot keeps its own x range, the whole planned run, from before Start.
The plots follow the theme (`plot_style.style_plot`): background, axes, titles and curves.
After Resume, the checkpoint's history is drawn first (`add_history`), the live steps after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QVBoxLayout, QWidget

from bertstudio.ui import plot_style, theme

# A point's symbol at 1.0 (or -1.0) is drawn whole: the fixed score axis reaches this far past its ends.
SCORE_MARGIN = 0.04
SMOOTHING = 0.9  # exponential moving average, as TensorBoard's default-ish slider
CORRELATIONS = ("pearson", "spearman")  # validation figures that live on -1..1
METRIC_COLOURS = ("#2a9d5c", "#c2410c", "#7c3aed", "#0e7490", "#b91c1c")
# curve colours per scheme: (raw loss, smoothed loss, validation loss, planned LR, actual LR)
CURVES = {"light": ("#9bb7e0", "#1a56b0", "#c2410c", "#999999", "#2a9d5c"),
          "dark": ("#4f6685", "#7fb0ff", "#f0935e", "#8f959e", "#4cc38a")}


def step_plot(left: str) -> pg.PlotWidget:
    """A plot against the training step: no SI prefix, aligned data areas, downsampled when long."""
    widget = pg.PlotWidget()
    item = widget.getPlotItem()
    item.setLabel("left", left)
    plot_style.step_axis(widget)
    item.getAxis("left").enableAutoSIPrefix(False)  # "loss (x0.001)" reads as a different quantity
    item.getAxis("left").setWidth(64)  # room for "4e-05"; the three plots' data areas line up
    item.showGrid(x=True, y=True, alpha=0.2)
    item.setClipToView(True)
    item.setDownsampling(auto=True, mode="peak")
    return widget


def legend_title(title: str, entries: Sequence[tuple[str, str, str]], empty: str = "") -> str:
    """An HTML title with a legend: (glyph, colour, name) per curve, above the data; `empty` without any."""
    keys = "&nbsp;&nbsp;".join(f"<span style='color:{colour}'>{glyph}</span>&nbsp;{name}"
                               for glyph, colour, name in entries)
    return f"<b>{title}</b>&nbsp;&nbsp;&nbsp;<span style='font-size:8pt'>{keys or empty}</span>"


def score_axis(plot: pg.PlotWidget, low: float) -> None:
    """The fixed score axis: 0-1, or -1..1 for correlations; it never zooms in on a small change."""
    item = plot.getPlotItem()
    item.setLabel("left", "score (0-1)" if low == 0.0 else "score (-1..1)")
    item.getViewBox().setLimits(yMin=low - SCORE_MARGIN, yMax=1.0 + SCORE_MARGIN)
    item.setYRange(low - SCORE_MARGIN, 1.0 + SCORE_MARGIN, padding=0)


class _Series:
    """Growing x/y data for one curve; `item.setData` is called only on redraw."""

    def __init__(self, item: pg.PlotDataItem) -> None:
        self.item = item
        self.x: list[float] = []
        self.y: list[float] = []

    def add(self, x: float, y: float) -> None:
        self.x.append(x)
        self.y.append(y)

    def clear(self) -> None:
        self.x.clear()
        self.y.clear()
        self.item.setData([], [])

    def draw(self) -> None:
        self.item.setData(np.asarray(self.x, dtype=float), np.asarray(self.y, dtype=float), skipFiniteCheck=True)

    def __len__(self) -> int:
        return len(self.x)


class TrainingPlots(QWidget):
    """Loss and validation share the step axis; the learning rate shows the whole plan."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.loss_plot = step_plot("loss")
        self.lr_plot = step_plot("learning rate")
        self.metric_plot = step_plot("score (0-1)")
        self.metric_plot.setXLink(self.loss_plot)
        self.metric_plot.getPlotItem().enableAutoRange(axis="y", enable=False)
        score_axis(self.metric_plot, 0.0)
        loss = self.loss_plot.getPlotItem()
        loss.getViewBox().setLimits(yMin=0.0)
        self.raw_loss = _Series(loss.plot())
        self.smooth_loss = _Series(loss.plot())
        self.eval_loss = _Series(loss.plot(pen=None, symbol="o", symbolSize=7))
        lr = self.lr_plot.getPlotItem()
        self.planned_lr = lr.plot()
        self.live_lr = _Series(lr.plot())
        self.metrics: dict[str, _Series] = {}
        self.stop_marks: list[tuple[pg.PlotWidget, pg.InfiniteLine]] = []  # early stopping: best, stopped
        self._smoothed: float | None = None
        self._dirty = False
        self._timer = QTimer(self)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._redraw)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget, stretch in ((self.loss_plot, 3), (self.lr_plot, 2), (self.metric_plot, 2)):
            layout.addWidget(widget, stretch)
        self.apply_theme(theme.colors())
        for widget in (self.loss_plot, self.lr_plot, self.metric_plot):  # background, axes, titles; curves once
            plot_style.style_plot(widget, on_theme=self.apply_theme if widget is self.loss_plot else None)

    def apply_theme(self, colors: Any) -> None:
        """Curve colours and legend titles that read on the scheme's background."""
        raw, smooth, evaluation, plan, live = CURVES.get(colors.name, CURVES["light"])
        self.raw_loss.item.setPen(pg.mkPen(raw, width=1))
        self.smooth_loss.item.setPen(pg.mkPen(smooth, width=2))
        self.eval_loss.item.setSymbolBrush(evaluation)
        self.planned_lr.setPen(pg.mkPen(plan, width=1.5, style=Qt.PenStyle.DashLine))
        self.live_lr.item.setPen(pg.mkPen(live, width=2))
        plot_style.set_title(self.loss_plot, legend_title(
            "Loss", [("━", raw, "loss"), ("━", smooth, "smoothed"), ("●", evaluation, "validation loss")]))
        plot_style.set_title(self.lr_plot, legend_title(
            "Learning rate", [("┅", plan, "planned"), ("━", live, "actual")]))
        self._update_metric_title()

    def _update_metric_title(self) -> None:
        entries = [("●", METRIC_COLOURS[i % len(METRIC_COLOURS)], name) for i, name in enumerate(self.metrics)]
        plot_style.set_title(self.metric_plot, legend_title(
            "Validation", entries or [("", theme.colors().muted, "appears at each evaluation")]))

    # -- data in ---------------------------------------------------------------------------
    def set_plan(self, lrs: Sequence[float] | np.ndarray) -> None:
        """The planned learning rate for steps 1..N, drawn whole: it is the preview before Start. An
        earlier run's actual rates followed its own plan, not this one: they go (issue 40)."""
        values = np.asarray(lrs, dtype=float)
        self.live_lr.clear()
        self.planned_lr.setData(np.arange(1, len(values) + 1, dtype=float), values)
        item = self.lr_plot.getPlotItem()
        if len(values):
            item.setXRange(1, max(2, len(values)), padding=0.02)
            top = float(np.nanmax(values)) if np.isfinite(values).any() else 1.0
            item.setYRange(0.0, top if top > 0 else 1.0, padding=0.05)
        item.enableAutoRange(enable=False)  # the plan decides the range, not the live points

    def add_step(self, step: int, loss: float | None, lr: float | None) -> None:
        if loss is not None and np.isfinite(loss):
            self.raw_loss.add(step, loss)
            self._smoothed = loss if self._smoothed is None else SMOOTHING * self._smoothed + (1 - SMOOTHING) * loss
            self.smooth_loss.add(step, self._smoothed)
        if lr is not None:
            self.live_lr.add(step, lr)
        self._touch()

    def add_history(self, steps: Sequence[tuple[int, float, float | None]],
                    evals: Sequence[tuple[int, dict[str, float]]]) -> None:
        """The steps a resumed run had logged before its checkpoint, drawn before the live ones."""
        for step, loss, lr in steps:
            self.add_step(step, loss, lr)
        for step, metrics in evals:
            self.add_eval(step, metrics)
        self.flush()

    def add_eval(self, step: int, metrics: dict[str, float]) -> None:
        for name, value in metrics.items():
            if name == "loss":
                self.eval_loss.add(step, value)
                continue
            if not -1.0 <= value <= 1.0:
                continue  # only scores (0-1, correlations -1..1) belong on this axis, not runtimes
            if value < 0.0 or name in CORRELATIONS:
                score_axis(self.metric_plot, -1.0)  # a Pearson of -0.35 is a point, not an empty plot
            if name not in self.metrics:
                colour = METRIC_COLOURS[len(self.metrics) % len(METRIC_COLOURS)]
                item = self.metric_plot.getPlotItem().plot(
                    pen=pg.mkPen(colour, width=1.5), symbol="o", symbolSize=6, symbolBrush=colour)
                self.metrics[name] = _Series(item)
                self._update_metric_title()
            self.metrics[name].add(step, value)
        self._touch()

    def mark_stop(self, best_step: int, stopped_step: int) -> None:
        """Early stopping: a line at the best evaluation's step (the model kept) and one where the run
        stopped, on the loss and validation plots."""
        self.clear_marks()
        colors = theme.colors()
        marks = [(best_step, "best", colors.foreground, Qt.PenStyle.SolidLine)]
        if stopped_step != best_step:
            marks.append((stopped_step, "stopped", colors.muted, Qt.PenStyle.DashLine))
        for plot in (self.loss_plot, self.metric_plot):
            for step, text, colour, style in marks:
                line = pg.InfiniteLine(pos=step, angle=90, pen=pg.mkPen(colour, width=1.5, style=style), label=text,
                                       labelOpts={"position": 0.92, "color": colour})
                line.setToolTip(f"{text}: step {step}")
                plot.getPlotItem().addItem(line)
                self.stop_marks.append((plot, line))

    def clear_marks(self) -> None:
        for plot, line in self.stop_marks:
            plot.getPlotItem().removeItem(line)
        self.stop_marks.clear()

    def clear_run(self) -> None:
        """Forget the live curves (the planned one stays). The validation curves go with their legend
        entries: the next run may report other metrics (a QA run after a classifier's accuracy)."""
        for series in (self.raw_loss, self.smooth_loss, self.eval_loss, self.live_lr):
            series.clear()
        for series in self.metrics.values():
            self.metric_plot.getPlotItem().removeItem(series.item)
        self.metrics.clear()
        self.clear_marks()
        score_axis(self.metric_plot, 0.0)
        self._update_metric_title()
        self._smoothed = None

    # -- drawing ---------------------------------------------------------------------------
    def _touch(self) -> None:
        self._dirty = True
        if not self._timer.isActive():
            self._redraw()  # the first point shows at once, later ones are batched
            self._timer.start()

    def _redraw(self) -> None:
        if not self._dirty:
            self._timer.stop()
            return
        self._dirty = False
        for series in (self.raw_loss, self.smooth_loss, self.eval_loss, self.live_lr, *self.metrics.values()):
            series.draw()

    def flush(self) -> None:
        self._dirty = True
        self._redraw()

    def counts(self) -> dict[str, int]:
        """How many points each live curve holds (for tests and the status line)."""
        return {"loss": len(self.raw_loss), "lr": len(self.live_lr), "eval": len(self.eval_loss)}

    def export_png(self, path: str) -> bool:
        self.flush()
        return self.grab().save(path, "PNG")
