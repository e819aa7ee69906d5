"""The Train tab's learning-rate finder: the form's run swept from 1e-7 to 1 in a worker
(core/training/find_lr.py), loss against learning rate drawn as it comes (log x), the suggested rate
marked, and "Use this LR" puts it in the form. Cancel ends the sweep at the next step; nothing is
saved either way. Collapsed until the form's "Find LR" opens it."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSpinBox, QWidget

from bertstudio.core.progress import ProgressEvent, TaskControl
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.find_lr import STEPS, LrPoint, LrRange
from bertstudio.ui import plot_style
from bertstudio.ui.train.panel import TrainPanel


def find_lr_job(config: TrainConfig, steps: int, control: TaskControl) -> LrRange:
    from bertstudio.core.training.find_lr import find_lr

    return find_lr(config, control, steps)


class FindLrPanel(TrainPanel):
    """Find LR / Cancel, progress, the loss-vs-LR plot and the suggestion with "Use this LR"."""

    sweep_ended = Signal()

    def __init__(self, config_source: Callable[[], TrainConfig], use_lr: Callable[[float], None],
                 show_message: Callable[..., None], parent: QWidget | None = None) -> None:
        super().__init__("Learning-rate finder", "A short sweep of the learning rate from 1e-7 to 1; nothing is saved",
                         config_source, show_message, parent)
        self.use_lr = use_lr
        self.result: LrRange | None = None
        self.points: list[LrPoint] = []
        self.steps = QSpinBox()
        self.steps.setRange(10, 1000)
        self.steps.setValue(STEPS)
        self.steps.setSuffix(" steps")
        self.steps.setToolTip("Training steps in the sweep from 1e-7 to 1 (it stops early once the loss explodes)")
        self.start_button, self.cancel_button = QPushButton("Find LR"), QPushButton("Cancel")
        self.while_running(self.start_button, self.cancel_button)
        self.use_button = QPushButton("Use this LR")
        self.use_button.setEnabled(False)
        self.use_button.setToolTip("Put the suggested learning rate in the form")
        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(lambda: self.runner.cancel())
        self.use_button.clicked.connect(self._use)
        self.suggestion = QLabel("")
        self.suggestion.setWordWrap(True)  # a long reason never widens the page
        self.plot, self.raw, self.curve, self.marker = self._build_plot()
        buttons = QHBoxLayout()
        for widget in (self.steps, self.start_button, self.cancel_button):
            buttons.addWidget(widget)
        buttons.addWidget(self.progress, 1)
        chosen = QHBoxLayout()
        chosen.addWidget(self.suggestion, 1)
        chosen.addWidget(self.use_button)
        self.lay_out(buttons, self.plot, chosen, cancelled="Learning-rate sweep cancelled.")
        self.runner.progress.connect(self.on_progress)
        self.runner.result.connect(self.on_result)
        self.runner.finished.connect(self.sweep_ended)

    @staticmethod
    def _build_plot() -> tuple[pg.PlotWidget, pg.PlotDataItem, pg.PlotDataItem, pg.InfiniteLine]:
        """Loss (points) and smoothed loss (line) against the learning rate on a log axis, and the suggestion."""
        plot = pg.PlotWidget()
        plot.setMinimumHeight(110)
        plot.setMaximumHeight(200)
        item = plot.getPlotItem()
        item.setLogMode(x=True, y=False)
        item.setLabel("bottom", "learning rate (log scale)")
        item.setLabel("left", "training loss")
        item.showGrid(x=True, y=True, alpha=0.2)
        raw = item.plot(pen=None, symbol="o", symbolSize=4, symbolBrush="#94a3b8")
        curve = item.plot(pen=pg.mkPen("#3b82f6", width=2))
        marker = pg.InfiniteLine(angle=90, pen=pg.mkPen("#2a9d5c", width=2))
        marker.setVisible(False)
        item.addItem(marker)
        plot_style.style_plot(plot)
        return plot, raw, curve, marker

    def start(self) -> None:
        self.toggle.setChecked(True)
        config = self.checked_config()
        if config is None:
            return
        self.result, self.points = None, []
        self.raw.setData([], [])
        self.curve.setData([], [])
        self.marker.setVisible(False)
        self.suggestion.setText("")
        self.use_button.setEnabled(False)
        self.progress.setValue(0)
        self.runner.start(find_lr_job, config, self.steps.value())

    def on_progress(self, event: ProgressEvent) -> None:
        if isinstance(event.payload, LrPoint):
            self.points.append(event.payload)
            lrs = np.asarray([p.learning_rate for p in self.points])
            self.raw.setData(lrs, np.asarray([p.loss for p in self.points]))
            self.curve.setData(lrs, np.asarray([p.smoothed for p in self.points]))
        self.show_fraction(event)
        self.progress.setFormat(event.message[:60])

    def on_result(self, result: LrRange) -> None:
        self.result = result
        self.show_done()
        if result.suggested is None:
            self.suggestion.setText(f"No suggestion: the loss never fell ({result.stopped_because}).")
            return
        self.marker.setValue(math.log10(result.suggested))  # log mode: the axis holds log10 values
        self.marker.setVisible(True)
        self.suggestion.setText(f"Suggested {result.suggested:.2g}: steepest descent of the smoothed loss "
                                f"({result.stopped_because}).")
        self.use_button.setEnabled(True)

    def _use(self) -> None:
        if self.result is not None and self.result.suggested is not None:
            self.use_lr(self.result.suggested)
            self.show_message(f"Learning rate set to {self.result.suggested:.2g}.")
