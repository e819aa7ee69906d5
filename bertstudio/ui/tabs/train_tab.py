"""Training tab: pick a base model and data, see the planned learning rate, train, watch, open the result.

The settings form is generated from the core's `TrainConfig` fields (ui/train/form.py), as
the `train` CLI is. Reading the data files for the plan happens in a worker, debounced,
never on the GUI thread. Stop sets an event the engine checks after each step and at each
evaluation batch, so the run ends soon and saves; the window's close uses the same path
through `is_running()`, `stop_and_save()` and the `run_ended` signal. The settings are read-only
while a run is going (it uses what was set at Start), and any error clears the drawn plan.
The shown result keeps what its run was started from (ui/train/origin.py): "Evaluate…" and
"Open in…" hand over that run's folder, task and data, and a form that now differs marks the
result Out of date, naming what changed, instead of hiding it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QLineEdit,
    QSplitter,
)

from bertstudio.core.tasks.pretraining.spec import SPEC as PRETRAINING
from bertstudio.core.training.base import TrainableTask
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.trainable import TRAINABLE
from bertstudio.resources import resource_path
from bertstudio.ui.binding import MERGED
from bertstudio.ui.tabs.frame import StudioTab
from bertstudio.ui.tabs.tab_state import RunState
from bertstudio.ui.train import curation_wiring
from bertstudio.ui.train import output as output_mod
from bertstudio.ui.train.form_pane import FormPane
from bertstudio.ui.train.jobs import Preview, preview_job, train_job
from bertstudio.ui.train.label_box import on_preview
from bertstudio.ui.train.lines import NO_PLAN
from bertstudio.ui.train.live import LiveRun, RunColumn
from bertstudio.ui.train.origin import NAMES as ORIGIN_FIELDS
from bertstudio.ui.train.origin import TrainInputs, inputs_of, origin_line, run_state
from bertstudio.ui.train.search_panel import SearchPanel
from bertstudio.ui.widgets.run_controls import StaleBanner
from bertstudio.workers.runner import TaskRunner

ALIASES = {"model": "base_model", "intermediate_size": "ffn", "hidden_size": "hidden"}


class TrainTab(StudioTab):
    TASK = PRETRAINING.key  # the pre-training spec runs here (it has no run of its own): window and workspace key
    TITLE = "Train"
    BOUND = {MERGED: "form", "from_scratch": "from_scratch"}  # the form's fields at the top level (ui/binding.py)
    ORDER = 90
    NOTES_PLACED = True  # under Start/Stop/Resume: a refusal beside the button that was refused
    ORIGIN_NAMES = ORIGIN_FIELDS  # the run's task, base model, files, folder, settings: each named when it differs
    NOTES_ONE_LINE = True  # a note that comes or goes never moves the plots, the search or the result

    # The form's fields, set by name in build() (ui/train/form.py makes them from TrainConfig).
    task: QComboBox
    device: QComboBox
    scheduler: QComboBox
    base_model: QLineEdit
    train_file: QLineEdit
    eval_file: QLineEdit
    output_dir: QLineEdit
    eval_share: QDoubleSpinBox
    overwrite: QCheckBox
    multi_label: QCheckBox
    learning_rate: QDoubleSpinBox

    run_ended = Signal()  # the run fully ended (saved, failed or cancelled): the window may close now
    open_model_requested = Signal(str, str)  # (task key, trained model folder): ui/wiring.py opens it there

    def set_devices(self, devices: list[str], dtypes: dict[str, list[str]]) -> None:
        """The base model is a setting of the run, not a loaded model: the devices go to the form."""
        current = self.device.currentText()
        self.device.clear()
        self.device.addItems(devices)
        if current in devices:
            self.device.setCurrentText(current)
        if self.plan_result is None:  # torch is imported now: a plan that failed on the way may work
            self._settings_changed()

    def build(self) -> None:
        self.result: Any = None
        self._run_inputs: TrainInputs | None = None  # what the run under way was started from
        self._shown_inputs: TrainInputs | None = None  # what the shown result's run was started from
        self._task_shown: str | None = None  # the task the shown result and folder were for
        self._restoring = False
        self.plan_result: Any = None
        self.can_open: Callable[[str], bool] = lambda _key: False  # which task tabs exist: set by ui/wiring.py
        self._stop_event = threading.Event()
        self.confirm_replace = output_mod.ask_replace  # replaced in tests
        self.plan_runner = TaskRunner(self)  # the plan preview, separate from the run
        self.plan_runner.result.connect(self._on_plan)
        self.plan_runner.error.connect(self._on_plan_error)
        self._build_form()
        self.live = LiveRun(NO_PLAN)  # the plan line, plots, progress and rate: what a run draws on
        self.plan_label, self.plots, self.teacher_plot = self.live.plan_label, self.live.plots, self.live.teacher_plot
        self.progress, self.rate_label, self.results = self.live.progress, self.live.rate_label, self.live.results
        self.metrics_label, self.checkpoint_label = self.results.metrics_label, self.results.checkpoint_label
        self.open_buttons, self.evaluate_button = self.results.open_buttons, self.results.evaluate_button
        self.delete_checkpoints = self.results.delete_checkpoints
        self.results.open_in.connect(self.open_result_in)
        self.results.evaluate.connect(self.evaluate_result)
        self.run_column = RunColumn(self.live, self.notes, self.settings)
        self.start_button, self.stop_button = self.run_column.start_button, self.run_column.stop_button
        self.resume_button = self.run_column.resume_button
        self.start_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self.resume_button.clicked.connect(lambda: self.start(resume=True))
        self._build_panels()
        splitter = QSplitter()
        splitter.addWidget(self.pane)
        splitter.addWidget(self.run_column)
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([self.pane.wanted_width, 2 * self.pane.wanted_width])
        self.body.addWidget(splitter, 1)
        self._connect_run()
        self._task_changed()

    def _build_form(self) -> None:
        """The settings pane; its fields become the tab's attributes by name (ALIASES)."""
        self.pane = pane = FormPane(self.use_demo_data, self._browse_output, lambda: self.task_key,
                                    self.show_message, self)
        self.form, self.demo_button, self.from_scratch = pane.form, pane.demo_button, pane.from_scratch
        self.scratch_box, self.distill_box, self.lora_box = pane.scratch_box, pane.distill_box, pane.lora_box
        self.columns_box, self.label_box = pane.columns_box, pane.label_box
        self.text_column, self.pair_column, self.label_column = pane.text_column, pane.pair_column, pane.label_column
        for name, widget in self.form.widgets.items():
            setattr(self, ALIASES.get(name, name), widget)
        self.form.layouts["Hardware"].setRowVisible(self.form.rows["resume"], False)  # Resume is a button
        self.overwrite.setText("Replace an earlier run here")  # the whole sentence (tooltip) set the form width
        self.multi_label.setText("Multi-label (several labels per row, separated by '|')")

    def _build_panels(self) -> None:
        """The search's controls above the run's record (a result shown after Stop grows below them and
        moves nothing already on the page), then Find LR, cross-validation and labelling; the shown run
        stays (a record), marked when the form differs."""
        self.search_panel = SearchPanel(self.config, self.log_refusal, self)  # Optuna search, collapsed
        self.search_panel.runner.started.connect(lambda: self.start_button.setEnabled(False))
        self.search_panel.search_ended.connect(lambda: self.start_button.setEnabled(not self.runner.busy))
        self.search_panel.search_ended.connect(self.run_ended)  # its trials are runs: the Runs tab refreshes
        self.runner.started.connect(lambda: self.search_panel.start_button.setEnabled(False))
        self.runner.finished.connect(lambda: self.search_panel.start_button.setEnabled(True))
        self.run_column.add(self.search_panel)
        curation_wiring.add_to(self, self.run_column.column)
        self.stale_banner = StaleBanner(self.results, action="Start trains a new model with the form as it is now.")
        self.run_column.add(self.stale_banner, self.results)

    def _connect_run(self) -> None:
        self._replan = QTimer(self)  # debounce: one worker read after typing pauses
        self._replan.setSingleShot(True)
        self._replan.setInterval(300)
        self._replan.timeout.connect(self.update_plan)
        self.form.changed.connect(self._settings_changed)
        self.form.changed.connect(self._update_stale)
        self.from_scratch.toggled.connect(self._update_stale)
        for combo in (self.text_column, self.pair_column, self.label_column):
            combo.currentIndexChanged.connect(self._settings_changed)
            combo.currentIndexChanged.connect(self._update_stale)
        self.task.currentIndexChanged.connect(self._task_changed)
        self.from_scratch.toggled.connect(self._task_changed)
        self.runner.started.connect(lambda: self._set_running(True))
        self.runner.finished.connect(lambda: self._set_running(False))
        self.runner.progress.connect(self.live.on_progress)
        self.runner.result.connect(self._on_result)
        self.runner.finished.connect(self._on_finished)
        self.runner.cancelled.connect(lambda: self.show_message("Training cancelled."))

    # -- settings --------------------------------------------------------------------------
    @property
    def task_key(self) -> str:
        return str(self.task.currentData())

    @property
    def trainable(self) -> TrainableTask:
        """What the chosen task offers (from scratch, named columns, demo files): asked, never switched on."""
        return TRAINABLE.get(self.task_key) or next(iter(TRAINABLE.values()))

    def _task_changed(self) -> None:
        if self.task_key != self._task_shown:
            self._forget_run(self._task_shown is not None and not self._restoring)
            self._task_shown = self.task_key
        self.live.show_task(self.pane.show_task(self.trainable))
        self._clear_plan("Reading the data for the plan…" if self.train_file.text().strip() else NO_PLAN)
        self._settings_changed()

    def _forget_run(self, new_folder: bool) -> None:
        """Another task: the last run's result, its "Open in" buttons and curves belong to the old one,
        and its output folder would lead straight into a Replace prompt: an empty field proposes a
        new folder (~/bertstudio-runs/<task>-<time>). A restored workspace keeps its folder."""
        self.result, self._shown_inputs = None, None
        self.live.clear_run()
        self.stale_banner.show_for("")
        if new_folder:
            self.output_dir.clear()
            self.overwrite.setChecked(False)

    def set_training_data(self, task: str, model: str, train_file: str, output_dir: str = "") -> None:
        """Another tab's hand-off (Tests' "Fine-tune on failures"): task, base model, data and output set;
        the person checks the plan and presses Start. The form's settings of an earlier run that would
        train something else (its validation file, max steps, LoRA adapter, from scratch) go back to
        their defaults, and the notes say which (issue 40: they were carried over silently)."""
        index = self.task.findData(task)
        if index >= 0:
            self.task.setCurrentIndex(index)
        reset = self.pane.reset(self._bound_defaults)
        self.base_model.setText(model)
        self.train_file.setText(train_file)
        if output_dir:
            self.output_dir.setText(output_dir)
        self._settings_changed()
        if reset:
            self.show_message(f"Back to their defaults for this model: {reset}.")

    def use_demo_data(self) -> None:
        train, evaluation = self.trainable.demo_files
        self.train_file.setText(str(resource_path("datasets", train)))
        self.eval_file.setText(str(resource_path("datasets", evaluation)) if evaluation else "")

    def restore(self, state: dict[str, Any]) -> None:
        """The bound form back, without the task-switch reaction (it would forget the folder restored)."""
        self._restoring = True
        try:
            super().restore(state)
        finally:
            self._restoring = False
        self._settings_changed()  # the plan of what came back, drawn without waiting for an edit

    def _settings_changed(self) -> None:
        self.pane.held_out_changed()
        self._replan.start()

    def config(self) -> TrainConfig:
        """The run's settings as the core's TrainConfig."""
        return self.pane.config(self.trainable, self.task_key)

    # -- the plan (before Start), read in a worker -------------------------------------------
    def update_plan(self) -> None:
        if self.runner.busy:
            return
        if not self.train_file.text().strip():
            self.plan_runner.cancel(emit=False)
            self._clear_plan(NO_PLAN)
            return
        self.plan_runner.start(preview_job, self.config(), self.trainable.columns)

    def _clear_plan(self, text: str) -> None:
        """No plan drawn under an error or for other settings than those shown."""
        self.plan_result = None
        self.live.clear_plan(text)

    def _on_plan(self, preview: Preview) -> None:
        self.pane.show_header(preview)
        instead = on_preview(self.label_box, self.multi_label, preview)  # labels with `|`: multi-label proposed
        if instead is not None:
            self._clear_plan(instead)
            return
        self.plan_result = (preview.plan, preview.lrs)
        self.live.show_plan(preview, self.scheduler.currentText())

    def _on_plan_error(self, error: BaseException) -> None:
        self._clear_plan(getattr(error, "message", None) or str(error))

    # -- running ---------------------------------------------------------------------------
    def start(self, resume: bool = False) -> None:
        """Start a run; `resume`: continue the one saved in the output folder (this run only)."""
        from bertstudio.core.errors import BertStudioError

        if resume and not self.output_dir.text().strip():
            self.show_message("Choose the output folder of the run to resume (… beside Output folder).", error=True)
            return
        try:
            config = replace(self.config(), resume=resume)
            config.validate()
        except BertStudioError as error:
            self.show_message(f"{error.message} {error.hint}".strip(), error=True)
            return
        checked = output_mod.safe_output(config, lambda folder: self.confirm_replace(self, folder), self.show_message)
        if checked is None:
            return
        config = checked
        self.overwrite.setChecked(config.overwrite)  # an earlier run of ours here: replaced, as confirmed
        self.output_dir.setText(config.output_dir)
        self.plan_runner.cancel(emit=False)
        self._stop_event = threading.Event()
        self.result, self._shown_inputs = None, None
        self._run_inputs = self._inputs_now(config.output_dir)
        self.live.clear_run()
        self.stale_banner.show_for("")
        self.runner.start(train_job, config, self._stop_event)
        self.run_column.show_running(True)
        self.status.emit(f"Train: started {config.task} → {config.output_dir}")

    def is_running(self) -> bool:
        """Whether a training run is under way (for the window's close)."""
        return self.runner.busy or self.search_panel.is_running()

    def stop_and_save(self) -> bool:
        """Ask the run to stop and save what was trained; returns at once. `run_ended` follows."""
        if not self.is_running():
            return False
        if self.search_panel.is_running():
            self.search_panel.stop()  # its search_ended is run_ended
        else:
            self.stop()
        return True

    def _set_running(self, running: bool) -> None:
        """The settings are read-only during a run: it uses what was set at Start (a wheel or a
        keystroke must not look as if it changed the run)."""
        self.form.setEnabled(not running)
        self.form.setToolTip("Read-only while the run is going; Stop to change the settings." if running else "")

    def stop(self) -> None:
        """End after the current step (or evaluation batch); the engine saves and returns the result."""
        self._stop_event.set()
        self.stop_button.setEnabled(False)
        self.show_message("Stopping after this step and saving…")

    def _on_result(self, result: Any) -> None:
        self.result = result
        self._shown_inputs = replace(self._run_inputs or self._inputs_now(result.output_dir),
                                     output_dir=result.output_dir)
        self.plots.flush()
        self.results.show_result(result, self.can_open, hasattr(self.window(), "open_evaluation"),
                                 origin_line(self._shown_inputs))
        self._update_stale()
        self.clear_message()
        state = "stopped early at" if result.stopped else "finished at"
        self.status.emit(f"Train: {state} step {result.step}; model in {result.output_dir}")

    def _on_finished(self) -> None:
        self.run_column.show_running(False)
        if self.rate_label.text() in ("Saving…", "Evaluating…", "Training…"):
            self.rate_label.setText("")
        if self.message.text().startswith("Stopping"):
            self.clear_message()
        self.run_ended.emit()

    def open_result_in(self, task: str) -> None:
        """Load the trained model in another tab and switch to it (the tab is reached by ui/wiring.py)."""
        if self.result is not None and self._shown_inputs is not None:  # the run's folder, not the form's
            self.open_model_requested.emit(task, self._shown_inputs.output_dir)

    def evaluate_result(self) -> None:
        """Hand the trained model and the run's validation (else training) file to the Evaluate view:
        the shown run's own, whatever the form says now (issue 29)."""
        window, shown = self.window(), self._shown_inputs
        if self.result is None or shown is None or not hasattr(window, "open_evaluation"):
            return
        window.open_evaluation(shown.output_dir, shown.eval_file or shown.train_file, self.result.open_in[0])

    # -- the shown run's origin (issue 29) -----------------------------------------------------
    def _inputs_now(self, output_dir: str | None = None) -> TrainInputs:
        """What Start would run now (`output_dir`: the folder it writes; default: the field)."""
        return inputs_of(self.task_key, self.pane.scratch(self.trainable), self.form.state(),
                         self.pane.chosen_columns(self.trainable),
                         self.output_dir.text().strip() if output_dir is None else output_dir)

    def result_origin(self) -> RunState | None:
        """The shown run's origin (base model and task; its files, folder and settings); None: none shown."""
        if self.result is None or self._shown_inputs is None:
            return None
        opened = tuple(self.result.open_in) or self.trainable.open_in  # a run that offers no tab: the task's
        return run_state(self._shown_inputs, opened[0])

    def origin_now(self) -> RunState | None:
        return run_state(self._inputs_now(), self.trainable.open_in[0])

    # -- helpers ---------------------------------------------------------------------------
    def _browse_output(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Where to save the model", self.output_dir.text())
        if folder:
            self.choose_output(Path(folder))

    def choose_output(self, chosen: Path) -> None:
        """A picked folder: used if new or empty; a sub-folder inside a foreign one; ours asks."""
        folder, why = output_mod.propose(chosen, self.task_key)
        if why == "ours" and not self.confirm_replace(self, folder):
            folder, why = chosen.parent / output_mod.new_run_name(self.task_key), "new"
        self.overwrite.setChecked(why == "ours")
        self.output_dir.setText(str(folder))
        if why == "inside":
            self.show_message(f"{chosen} holds other files and is never replaced: the model goes into a new "
                              f"folder inside it.")
