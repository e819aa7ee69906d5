"""Teacher vs student, live, for a distillation run: how often the student's top-1 agrees with the
teacher's, the student's accuracy, and the teacher's accuracy as the line to reach, on the
validation split at each evaluation. A fixed 0-1 axis, the legend in the title, dark-theme aware.

The Train tab shows it only for a trainable that distils, and feeds it the `eval` events'
metrics (`agreement`, `accuracy`, `teacher_accuracy` from core/tasks/classification/train_distill.py); the
distillation settings (`DistillConfig`) come from the same generated form as every other setting.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from bertstudio.core.training.distill_config import DistillConfig
from bertstudio.ui import plot_style, theme

# (metric, legend name, colour light, colour dark, dashed): the teacher's accuracy is the target line
SERIES = (("agreement", "agreement with teacher", "#7c3aed", "#b794f6", False),
          ("accuracy", "student accuracy", "#2a9d5c", "#4cc38a", False),
          ("teacher_accuracy", "teacher accuracy", "#8a8a8a", "#a0a6ad", True))


def distill_settings(form: Any, trainable: Any) -> DistillConfig | None:
    """The form's distillation settings where the chosen task distils, else None."""
    return DistillConfig(**form.values(DistillConfig)) if getattr(trainable, "distils", False) else None


class TeacherStudentPlot(QWidget):
    """Agreement, student and teacher accuracy against the step (0-1)."""

    def __init__(self, x_link: pg.PlotWidget | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget()
        if x_link is not None:
            self.plot.setXLink(x_link)  # the same steps as the loss plot above
        item = self.plot.getPlotItem()
        item.setLabel("left", "share (0-1)")
        item.setLabel("bottom", "step")
        item.getAxis("left").setWidth(64)  # lines up with the training plots above
        item.showGrid(x=True, y=True, alpha=0.2)
        item.setYRange(0.0, 1.0, padding=0)
        item.getViewBox().setLimits(yMin=0.0, yMax=1.0)
        item.enableAutoRange(axis="y", enable=False)
        self.items = {key: item.plot(symbol="o", symbolSize=6) for key, *_rest in SERIES}
        self.points: dict[str, tuple[list[float], list[float]]] = {key: ([], []) for key, *_rest in SERIES}
        self.setMinimumHeight(80)  # in place of the training plots' validation plot (hidden while distilling)
        self.setMaximumHeight(220)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        self.apply_theme(theme.colors())
        plot_style.style_plot(self.plot, on_theme=self.apply_theme)

    def apply_theme(self, colors: Any) -> None:
        dark = colors.name == "dark"
        entries = []
        for key, name, light_colour, dark_colour, dashed in SERIES:
            colour = dark_colour if dark else light_colour
            style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
            self.items[key].setPen(pg.mkPen(colour, width=2, style=style))
            self.items[key].setSymbolBrush(colour)
            entries.append(f"<span style='color:{colour}'>{'┅' if dashed else '━'}</span>&nbsp;{name}")
        plot_style.set_title(self.plot, "<b>Teacher vs student</b>&nbsp;&nbsp;&nbsp;<span style='font-size:8pt'>"
                                        + "&nbsp;&nbsp;".join(entries) + "</span>")

    def add_eval(self, step: int, metrics: dict[str, float]) -> None:
        for key, *_rest in SERIES:
            value = metrics.get(key)
            if value is not None and 0.0 <= value <= 1.0:
                xs, ys = self.points[key]
                xs.append(float(step))
                ys.append(float(value))
                self.items[key].setData(np.asarray(xs), np.asarray(ys), skipFiniteCheck=True)

    def add_history(self, evals: Any) -> None:
        """A resumed run's evaluations before its checkpoint."""
        for step, metrics in evals:
            self.add_eval(step, metrics)

    def clear_run(self) -> None:
        for key, (xs, ys) in self.points.items():
            xs.clear()
            ys.clear()
            self.items[key].setData([], [])
