"""Several recorded runs' curves overlaid: loss, learning rate and one validation metric, each on
one plot whose axes every run shares (runs are told apart by colour, named in the legend above the
data). The step axes are linked, so zooming one zooms all three; scores sit on the fixed 0-1 axis
(-1..1 for a correlation), loss and learning rate on their own ranges, never with an SI prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from bertstudio.ui import plot_style, theme
from bertstudio.ui.widgets.training_plots import CORRELATIONS, legend_title, score_axis, step_plot

# one colour per run (cycled), readable on each scheme's background
RUN_COLOURS = {"light": ("#1a56b0", "#c2410c", "#2a9d5c", "#7c3aed", "#0e7490", "#b91c1c", "#a16207", "#be185d"),
               "dark": ("#7fb0ff", "#f0935e", "#4cc38a", "#b794f6", "#5fd1e6", "#f87171", "#facc15", "#f472b6")}


def metric_names(runs: Sequence[Any]) -> list[str]:
    """Every validation metric any of the runs recorded, loss last (it is on the loss plot's scale)."""
    names = sorted({name for run in runs for name in run.curves.evals})
    return sorted(names, key=lambda name: (name == "loss", name))


def is_score(name: str, values: Sequence[float]) -> bool:
    """A score belongs on the fixed -1..1 / 0-1 axis; anything else (a loss, a perplexity) on its own."""
    return name != "loss" and all(-1.0 <= v <= 1.0 for v in values)


class RunCurves(QWidget):
    """The overlay; `show_runs(runs)` draws each run's recorded curves (RunRecord.curves)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.loss_plot = step_plot("training loss")
        self.lr_plot = step_plot("learning rate")
        self.metric_plot = step_plot("score (0-1)")
        for plot in (self.lr_plot, self.metric_plot):
            plot.setXLink(self.loss_plot)
        self.metric_choice = QComboBox()
        self.metric_choice.setToolTip("The validation metric drawn for every selected run")
        self.metric_choice.currentTextChanged.connect(lambda _name: self._draw())
        self.runs: list[Any] = []
        self.items: list[tuple[pg.PlotWidget, pg.PlotDataItem]] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Validation metric:"))
        row.addWidget(self.metric_choice)
        row.addStretch(1)
        layout.addWidget(self.loss_plot, 3)
        layout.addWidget(self.lr_plot, 2)
        layout.addLayout(row)
        layout.addWidget(self.metric_plot, 2)
        for widget in (self.loss_plot, self.lr_plot, self.metric_plot):
            widget.setMinimumHeight(120)
            plot_style.style_plot(widget, on_theme=self.apply_theme if widget is self.loss_plot else None)
        self._draw()

    def colour(self, index: int) -> str:
        colours = RUN_COLOURS.get(theme.colors().name, RUN_COLOURS["light"])
        return colours[index % len(colours)]

    def apply_theme(self, _colors: Any) -> None:
        """Run colours follow the scheme (plot_style calls this bound method on a theme change)."""
        self._draw()

    def show_runs(self, runs: Sequence[Any]) -> None:
        """Draw these runs (in this order: colours follow it); the metric choice is kept if it is there."""
        self.runs = list(runs)
        chosen = self.metric_choice.currentText()
        names = metric_names(self.runs)
        self.metric_choice.blockSignals(True)
        self.metric_choice.clear()
        self.metric_choice.addItems(names)
        preferred = [n for n in (chosen, "accuracy", "f1", "exact_match", "pearson") if n in names]
        if preferred:
            self.metric_choice.setCurrentText(preferred[0])
        self.metric_choice.blockSignals(False)
        self.metric_choice.setEnabled(bool(names))
        self._draw()

    def _draw(self) -> None:
        for plot, item in self.items:
            plot.removeItem(item)
        self.items = []
        metric = self.metric_choice.currentText()
        values: list[float] = []
        for index, run in enumerate(self.runs):
            pen = pg.mkPen(self.colour(index), width=1.5)
            for plot, points, symbol in ((self.loss_plot, run.curves.loss, None),
                                         (self.lr_plot, run.curves.learning_rate, None),
                                         (self.metric_plot, run.curves.evals.get(metric, ()), "o")):
                if not points:
                    continue
                steps = np.asarray([p[0] for p in points], dtype=float)
                ys = np.asarray([p[1] for p in points], dtype=float)
                if plot is self.metric_plot:
                    values += ys.tolist()
                item = plot.getPlotItem().plot(steps, ys, pen=pen, symbol=symbol, symbolSize=5,
                                               symbolBrush=self.colour(index), skipFiniteCheck=True)
                self.items.append((plot, item))
        self._metric_axis(metric, values)
        keys = [("━", self.colour(i), self.label(run)) for i, run in enumerate(self.runs)]
        for plot, title in ((self.loss_plot, "Training loss"), (self.lr_plot, "Learning rate"),
                            (self.metric_plot, f"Validation {metric}" if metric else "Validation")):
            plot_style.set_title(plot, legend_title(title, keys, "select runs in the table"))

    @staticmethod
    def label(run: Any) -> str:
        """A run's short name in a legend: its start time, the id's random tail (ids are unique) and
        whether it trained the whole model or a LoRA adapter."""
        from bertstudio.core.runs.index import training_kind

        return f"{run.started[5:16].replace('T', ' ')} ({run.id[-4:]}, {training_kind(run)})"

    def _metric_axis(self, metric: str, values: list[float]) -> None:
        item = self.metric_plot.getPlotItem()
        if metric and values and is_score(metric, values):
            item.enableAutoRange(axis="y", enable=False)
            score_axis(self.metric_plot, -1.0 if metric in CORRELATIONS or min(values) < 0 else 0.0)
        else:
            item.setLabel("left", metric or "value")
            item.getViewBox().setLimits(yMin=None, yMax=None)
            item.enableAutoRange(axis="y", enable=True)
