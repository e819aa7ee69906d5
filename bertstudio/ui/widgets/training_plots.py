"""Live training curves: loss (raw + smoothed, eval points), learning rate over its plan, eval metrics.

pyqtgraph's live-plot recipe: one PlotDataItem per curve, fed with numpy arrays through
`setData`; points arrive at every step but the items are redrawn at most ~10 times a second.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QVBoxLayout, QWidget

SMOOTHING = 0.9  # exponential moving average, as TensorBoard's default-ish slider
METRIC_COLOURS = ("#2a9d5c", "#c2410c", "#7c3aed", "#0e7490", "#b91c1c")


def _plot(title: str, left: str) -> pg.PlotWidget:
    widget = pg.PlotWidget(background="w")
    item = widget.getPlotItem()
    item.setTitle(title, color="#333", size="10pt")
    item.setLabel("left", left)
    item.setLabel("bottom", "step")
    item.showGrid(x=True, y=True, alpha=0.2)
    item.setClipToView(True)
    item.setDownsampling(auto=True, mode="peak")
    item.addLegend(offset=(-10, 10), labelTextSize="8pt")
    return widget


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
    """Three stacked plots sharing the step axis."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.loss_plot = _plot("Loss", "loss")
        self.lr_plot = _plot("Learning rate", "lr")
        self.metric_plot = _plot("Validation", "metric")
        self.lr_plot.setXLink(self.loss_plot)
        self.metric_plot.setXLink(self.loss_plot)
        loss = self.loss_plot.getPlotItem()
        self.raw_loss = _Series(loss.plot(pen=pg.mkPen("#9bb7e0", width=1), name="loss"))
        self.smooth_loss = _Series(loss.plot(pen=pg.mkPen("#1a56b0", width=2), name="smoothed"))
        self.eval_loss = _Series(loss.plot(pen=None, symbol="o", symbolSize=7, symbolBrush="#c2410c",
                                           name="validation loss"))
        lr = self.lr_plot.getPlotItem()
        self.planned_lr = lr.plot(pen=pg.mkPen("#999", width=1.5, style=Qt.PenStyle.DashLine), name="planned")
        self.live_lr = _Series(lr.plot(pen=pg.mkPen("#2a9d5c", width=2), name="actual"))
        self.metrics: dict[str, _Series] = {}
        self._smoothed: float | None = None
        self._dirty = False
        self._timer = QTimer(self)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._redraw)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget, stretch in ((self.loss_plot, 3), (self.lr_plot, 2), (self.metric_plot, 2)):
            layout.addWidget(widget, stretch)

    # -- data in ---------------------------------------------------------------------------
    def set_plan(self, lrs: Sequence[float] | np.ndarray) -> None:
        """The planned learning rate for steps 1..N (drawn at once: it is the preview)."""
        values = np.asarray(lrs, dtype=float)
        self.planned_lr.setData(np.arange(1, len(values) + 1, dtype=float), values)

    def add_step(self, step: int, loss: float | None, lr: float | None) -> None:
        if loss is not None and np.isfinite(loss):
            self.raw_loss.add(step, loss)
            self._smoothed = loss if self._smoothed is None else SMOOTHING * self._smoothed + (1 - SMOOTHING) * loss
            self.smooth_loss.add(step, self._smoothed)
        if lr is not None:
            self.live_lr.add(step, lr)
        self._touch()

    def add_eval(self, step: int, metrics: dict[str, float]) -> None:
        for name, value in metrics.items():
            if name == "loss":
                self.eval_loss.add(step, value)
                continue
            if name not in self.metrics:
                colour = METRIC_COLOURS[len(self.metrics) % len(METRIC_COLOURS)]
                item = self.metric_plot.getPlotItem().plot(
                    pen=pg.mkPen(colour, width=1.5), symbol="o", symbolSize=6, symbolBrush=colour, name=name)
                self.metrics[name] = _Series(item)
            self.metrics[name].add(step, value)
        self._touch()

    def clear_run(self) -> None:
        """Forget the live curves (the planned one stays)."""
        for series in (self.raw_loss, self.smooth_loss, self.eval_loss, self.live_lr, *self.metrics.values()):
            series.clear()
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
