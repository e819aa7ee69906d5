"""The Train tab's hyperparameter search: the space (JSON ranges, prefilled with the defaults for the
form's settings), the number of trials and the metric compared; a live table of trials, the metric
against the trial number (best so far as a line), parameter importance once two trials finished,
progress, and Stop, which ends the running trial and keeps the finished ones. The search runs in a
worker (core/training/search.py); every trial is a real run in `<output>/trials`, the best one's
model is saved at the output folder. Collapsed until opened, so a small window keeps its plots.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from bertstudio.core.notes import Note
from bertstudio.core.progress import ProgressEvent, TaskControl
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.search import SearchResult, TrialProgress, TrialRecord
from bertstudio.core.training.search_space import MAXIMISED, default_space
from bertstudio.ui import plot_style
from bertstudio.ui.screen_fit import keep_room
from bertstudio.ui.train.panel import TrainPanel, new_table
from bertstudio.ui.widgets.forms import set_cells
from bertstudio.ui.widgets.notes_area import NotesArea

METRICS = ("loss", *sorted(MAXIMISED))


def search_job(config: TrainConfig, trials: int, space_text: str, metric: str, stop_event: threading.Event,
               control: TaskControl) -> SearchResult:
    """The search, off the GUI thread: the space's JSON read here, so a mistake is one clear error."""
    from bertstudio.core.datafiles import parse_json
    from bertstudio.core.training.search import search
    from bertstudio.core.training.search_space import parse_space

    data = parse_json(space_text, "The search space")  # the file's reader: a key given twice is refused too
    if isinstance(data, dict):
        data = {**data, "metric": metric}
    return search(config, trials, parse_space(data, config), control, stop_event=stop_event)


class SearchPanel(TrainPanel):
    """Search settings, Start/Stop, the trials table, the metric plot and importance."""

    search_ended = Signal()  # the worker returned (finished, stopped or failed)

    def __init__(self, config_source: Callable[[], TrainConfig], log_refusal: Callable[[str], None],
                 parent: QWidget | None = None) -> None:
        super().__init__("Hyperparameter search",
                         "Optuna: several runs with settings from a seeded sampler; bad trials are pruned",
                         config_source, parent=parent)
        self.log_refusal = log_refusal
        self.notes = NotesArea(one_line=True)  # under Start search: a refusal beside the button refused
        self.result: SearchResult | None = None
        self.records: list[TrialRecord] = []
        self.trials = QSpinBox()
        self.trials.setRange(1, 500)
        self.trials.setValue(8)
        self.metric_choice = QComboBox()
        self.metric_choice.addItems(METRICS)
        self.metric_choice.setToolTip("validation metric compared (loss is minimised, the others maximised)")
        self.space = QPlainTextEdit()
        self.space.setToolTip("ranges: learning_rate, batch_size, warmup_ratio, epochs, weight_decay, lora_rank; "
                              '{"low", "high", "log"} or {"choices": [...]}')
        self.space.setMaximumHeight(110)
        self.defaults_button = QPushButton("Defaults")
        self.defaults_button.setToolTip("sensible ranges for the form's settings (epochs only without max steps)")
        self.defaults_button.clicked.connect(self.fill_defaults)
        self.start_button, self.stop_button = QPushButton("Start search"), QPushButton("Stop search")
        self.stop_button.setToolTip("End the running trial; the finished trials and the best model are kept")
        self.while_running(self.start_button, self.stop_button)
        self.start_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self.progress.setTextVisible(True)
        self.progress.setFormat("")
        self.table = new_table(["Trial", "State", "Metric"], 90)
        self.plot = pg.PlotWidget()
        self.plot.setMinimumHeight(90)
        self.plot.setMaximumHeight(180)
        item = self.plot.getPlotItem()
        item.setLabel("bottom", "trial")
        item.showGrid(x=True, y=True, alpha=0.2)
        self.points = item.plot(pen=None, symbol="o", symbolSize=7, symbolBrush="#3b82f6")
        self.best_line = item.plot(pen=pg.mkPen("#2a9d5c", width=2))
        plot_style.style_plot(self.plot)
        self.importance = QLabel("")
        self.importance.setWordWrap(True)
        self._lay_out_parts()
        self.runner.progress.connect(self.on_progress)
        self.runner.result.connect(self.on_result)
        self.runner.finished.connect(self.search_ended)

    def _lay_out_parts(self) -> None:
        settings = QFormLayout()
        settings.addRow("Trials", self.trials)
        settings.addRow("Metric", self.metric_choice)
        space_row = QHBoxLayout()
        space_row.addWidget(self.space, 1)
        space_row.addWidget(self.defaults_button)
        settings.addRow("Space", space_row)
        buttons = QHBoxLayout()
        for widget in (self.start_button, self.stop_button):
            buttons.addWidget(widget)
        buttons.addWidget(self.progress, 1)
        views = QHBoxLayout()
        views.addWidget(self.table, 1)
        views.addWidget(self.plot, 1)
        self.lay_out(settings, buttons, keep_room(self.notes), views, self.importance, cancelled="Search cancelled.")

    def show_message(self, text: str, error: bool = False) -> None:
        """A note under the search's buttons; a refusal (`error`) goes to the Log too."""
        self.notes.set_notes([Note("error" if error else "warning", text)] if text else [])
        if error and text:
            self.log_refusal(text)

    # -- settings --------------------------------------------------------------------------
    def fill_defaults(self) -> None:
        """The default ranges for the form's current settings (no model or data is read)."""
        from bertstudio.core.errors import BertStudioError

        try:
            config = self.config_source()
        except BertStudioError:
            config = TrainConfig()
        space = default_space(config)
        self.space.setPlainText(json.dumps({r.name: r.to_json() for r in space.ranges}, indent=1))

    # -- running ---------------------------------------------------------------------------
    def start(self) -> None:
        if not self.space.toPlainText().strip():
            self.fill_defaults()
        config = self.checked_config()
        if config is None:
            return
        self.result, self.records = None, []
        self.table.setRowCount(0)
        self.points.setData([], [])
        self.best_line.setData([], [])
        self.importance.setText("")
        self.progress.setValue(0)
        self._stop_event = threading.Event()
        self.runner.start(search_job, config, self.trials.value(), self.space.toPlainText(),
                          self.metric_choice.currentText(), self._stop_event)

    def stop(self) -> None:
        """End the running trial after its step; the finished trials and the best model stay."""
        self._stop_event.set()
        self.stop_button.setEnabled(False)
        self.show_message("Stopping the running trial; the finished trials are kept…")

    def on_progress(self, event: ProgressEvent) -> None:
        payload = event.payload
        if isinstance(payload, TrialRecord):
            self.add_record(payload)
        elif isinstance(payload, TrialProgress):
            done, total = payload.trial, self.trials.value()
            step = payload.event.step / payload.event.max_steps if payload.event.max_steps else 0.0
            self.progress.setValue(int(1000 * (done + step) / max(1, total)))
            self.progress.setFormat(f"trial {payload.trial + 1}/{total}: step {payload.event.step}"
                                    f"/{payload.event.max_steps}")
        else:
            self.show_fraction(event)

    def add_record(self, record: TrialRecord) -> None:
        """A trial that ended: a table row (its parameters as columns) and a point on the plot."""
        self.records.append(record)
        names = list(record.params)
        if self.table.columnCount() != 3 + len(names):
            self.table.setColumnCount(3 + len(names))
            self.table.setHorizontalHeaderLabels(["Trial", "State", "Metric", *names])
        row = self.table.rowCount()
        self.table.insertRow(row)
        value = "" if record.value is None else f"{record.value:.4f}"
        set_cells(self.table, row, [str(record.number + 1), record.state, value,
                                    *(f"{record.params[n]:.3g}" for n in names)], record.message or record.output_dir)
        finished = [r for r in self.records if r.state == "finished" and r.value is not None]
        if finished:
            xs = np.asarray([r.number + 1 for r in finished], dtype=float)
            ys = np.asarray([r.value for r in finished], dtype=float)
            self.points.setData(xs, ys)
            better = np.maximum.accumulate if self.metric_choice.currentText() in MAXIMISED else np.minimum.accumulate
            self.best_line.setData(xs, better(ys))
            self.plot.getPlotItem().enableAutoRange()  # every trial in sight, even after a zoom (Ctrl+wheel)
        self.plot.getPlotItem().setLabel("left", self.metric_choice.currentText())

    def on_result(self, result: SearchResult) -> None:
        self.result = result
        if result.importance:
            self.importance.setText("Importance (fANOVA): " + ", ".join(
                f"{name} {share:.2f}" for name, share in result.importance.items()))
        if result.best is None:
            self.show_message("No trial finished, so no model was saved.", error=True)
            return
        self.show_done("stopped" if result.stopped else "done")
        # a success is information, not a warning (issue 40: it carried the warning icon)
        self.notes.set_notes([Note("info", f"Best trial {result.best.number + 1}: {result.metric} "
                                           f"{result.best.value:.4f}; model saved to {result.output_dir} "
                                           "(finished trials in its trials folder).")])
