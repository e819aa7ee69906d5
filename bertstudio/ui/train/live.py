"""The live side of the Train tab: the plan line, the loss / LR / validation plots (teacher vs
student in place of validation for a distillation), the progress bar and the rate line, and how
each event of a run lands on them; RunColumn lays them out with the run's buttons. The tab owns
the settings and the run; this draws them.

A distillation's evaluations go to the teacher-vs-student plot; the validation plot (hidden then)
gets only their loss, so a later run of another task never inherits its legend entries.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QProgressBar, QPushButton, QVBoxLayout, QWidget

from bertstudio.core.progress import ProgressEvent
from bertstudio.ui.screen_fit import keep_room
from bertstudio.ui.settings import AppSettings
from bertstudio.ui.train.distill_panel import TeacherStudentPlot
from bertstudio.ui.train.jobs import PlannedRates, Preview, ResumedHistory
from bertstudio.ui.train.lines import plan_text, rate_text
from bertstudio.ui.train.result_panel import ResultPanel
from bertstudio.ui.widgets.elided_label import ElidedLabel
from bertstudio.ui.widgets.training_plots import TrainingPlots

# pixels: title, a rotated axis label ("learning rate") and the step ticks stay apart (issue 29 #12)
PLOT_MIN_HEIGHTS = (150, 150, 150)
PROGRESS_MIN_WIDTH = 160  # pixels: room for "step 1234 / 5678" beside the bar's fill


class LiveRun:
    """The widgets a run draws on, and the one place its events are turned into drawing."""

    def __init__(self, plan_text_when_empty: str) -> None:
        self.plan_label = ElidedLabel(plan_text_when_empty)  # never widens the window (whole text in the tooltip)
        self.plots = TrainingPlots()
        for plot, least in zip((self.plots.loss_plot, self.plots.lr_plot, self.plots.metric_plot), PLOT_MIN_HEIGHTS,
                               strict=True):
            plot.setMinimumHeight(least)  # a long result text scrolls the page; it never squeezes the axes
        self.teacher_plot = TeacherStudentPlot(x_link=self.plots.loss_plot)  # distillation only
        self.teacher_plot.setMaximumHeight(180)  # the loss and LR plots above keep room to read
        self.progress = QProgressBar()
        self.progress.setFormat("step %v / %m")
        self.rate_label = ElidedLabel("")
        self.results = ResultPanel()
        self.distils = False
        self.best_marked = False  # early stopping's best step was drawn: the evaluation after it is the kept model's

    def show_task(self, distils: bool) -> None:
        """Teacher vs student replaces the validation plot for a task that distils."""
        self.distils = distils
        self.teacher_plot.setVisible(distils)
        self.plots.metric_plot.setVisible(not distils)

    # -- the plan ---------------------------------------------------------------------------
    def clear_plan(self, text: str) -> None:
        """No plan drawn under an error or for other settings than those shown."""
        self.plots.set_plan([])
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setTextVisible(False)  # no "step 0 / 1" for a plan that is not there
        self.plan_label.setText(text)

    def show_plan(self, preview: Preview, scheduler: str) -> None:
        steps = preview.plan
        self.plots.set_plan(preview.lrs)
        self.progress.setRange(0, steps.total_steps)
        self.progress.setValue(0)
        self.progress.setTextVisible(True)
        self.plan_label.setText(plan_text(steps, scheduler))

    # -- a run -----------------------------------------------------------------------------
    def clear_run(self) -> None:
        self.plots.clear_run()
        self.best_marked = False
        self.teacher_plot.clear_run()
        self.results.clear()
        self.rate_label.setText("")

    def on_progress(self, event: ProgressEvent) -> None:
        from bertstudio.core.training.early_stopping import BEST_EVENT
        from bertstudio.core.training.events import TrainingEvent

        payload = event.payload
        if isinstance(payload, PlannedRates):
            self.plots.set_plan(payload.values)
            return
        if isinstance(payload, ResumedHistory):
            evals = payload.history.evals
            self.plots.add_history(payload.history.steps, [(s, self._for_plots(m)) for s, m in evals])
            self.teacher_plot.add_history(evals)
            return
        if not isinstance(payload, TrainingEvent):
            self.rate_label.setText(event.message)
            return
        if payload.kind == "plan":
            self.progress.setRange(0, payload.max_steps)
            self.progress.setTextVisible(True)
            self.plan_label.setText(payload.message)
        elif payload.kind == "step":
            self.plots.add_step(payload.step, payload.loss, payload.learning_rate)
            self.progress.setValue(payload.step)
            self.rate_label.setText(rate_text(payload))
        elif payload.kind == BEST_EVENT:  # early stopping: where the kept model was, where it stopped
            self.plots.mark_stop(payload.step, int(payload.metrics.get("stopped_step", payload.step)))
            self.results.show_note(payload.message)
            self.best_marked = True
        elif payload.kind == "eval" and self.best_marked:  # the kept model's own evaluation: not a new point
            self.results.show_eval(payload.step, payload.metrics)
        elif payload.kind == "eval":
            self.plots.add_eval(payload.step, self._for_plots(payload.metrics))
            if self.distils:
                self.teacher_plot.add_eval(payload.step, payload.metrics)
            self.results.show_eval(payload.step, payload.metrics)
        elif payload.kind == "saving":
            self.rate_label.setText("Saving…")
        elif payload.kind == "done":
            self.rate_label.setText("")

    def _for_plots(self, metrics: dict[str, Any]) -> dict[str, Any]:
        """A distillation's scores belong to the teacher-vs-student plot: the loss plot gets its loss."""
        return {k: v for k, v in metrics.items() if k == "loss"} if self.distils else metrics


class RunColumn(QWidget):
    """Plan line and plots, Start / Stop / Resume and Export PNG, the progress bar and the rate line on
    rows of their own, the notes; the tab adds its panels and the run's record below (`add`)."""

    def __init__(self, live: LiveRun, notes: QWidget, settings: AppSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.live, self.settings = live, settings
        self.start_button = QPushButton("Start")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop after the current step (or evaluation batch) and save what was trained")
        # Resume is an action, not a setting: a ticked box stayed ticked after the resume, below the
        # visible form, and the next run into a new folder failed with "no checkpoint to resume".
        self.resume_button = QPushButton("Resume")
        self.resume_button.setToolTip("Continue the run saved in the output folder from its last checkpoint "
                                      "(same task, base model and labels)")
        self.show_running(False)
        self.export_button = QPushButton("Export PNG…")
        self.export_button.clicked.connect(self._export)
        controls, status = QHBoxLayout(), QVBoxLayout()
        for widget in (self.start_button, self.stop_button, self.resume_button):
            controls.addWidget(widget)
        controls.addStretch(1)
        controls.addWidget(self.export_button)
        # Rows of their own: the bar's text ("step 12 / 45") and the rate with a run's longest ETA
        # ("123.4 samples/s  ETA 1:12:01") are never squeezed to "Trainin…" / "ETA 0:…", even at 900x600
        live.progress.setMinimumWidth(PROGRESS_MIN_WIDTH)
        status.setSpacing(2)
        status.addWidget(live.progress)
        status.addWidget(live.rate_label)
        self.column = QVBoxLayout(self)
        self.column.setContentsMargins(0, 0, 0, 0)
        self.column.addWidget(live.plan_label)
        self.column.addWidget(live.plots, 1)
        self.column.addWidget(live.teacher_plot)
        self.column.addLayout(controls)
        self.column.addLayout(status)
        self.column.addWidget(keep_room(notes))

    def add(self, *widgets: QWidget) -> None:
        for widget in widgets:
            self.column.addWidget(widget)

    def show_running(self, running: bool) -> None:
        """Stop while a run goes; Start and Resume when none does."""
        self.start_button.setEnabled(not running)
        self.resume_button.setEnabled(not running)
        self.stop_button.setEnabled(running)

    def _export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export plots", self.settings.save_path("training.png"),
                                              "PNG image (*.png)")
        self.settings.remember_save(path)
        if path:
            self.live.plots.export_png(path)
