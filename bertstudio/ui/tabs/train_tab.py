"""Training tab: pick a base model and data, see the planned learning rate, train, watch, open the result.

The settings form builds a core `TrainConfig` (state apart from widgets); the run goes
through `self.runner` and its progress events carry the engine's `TrainingEvent`s. Stop
sets an event the engine checks after each step, so the run ends cleanly and saves; the
runner's own cancel (used on supersede and window close) stops it too, dropping the result.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.progress import ProgressEvent, TaskControl
from bertstudio.resources import resource_path
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.training_plots import TrainingPlots
from bertstudio.workers.runner import TaskRunner

TASK_LABELS = {
    "text-classification": "Text classification (CSV / TSV / JSONL)",
    "token-classification": "Token classification / NER (CoNLL)",
    "pretraining": "Pre-training: masked LM + next sentence (plain text)",
}
DEMO_FILES = {
    "text-classification": ("reviews_train.csv", "reviews_eval.csv"),
    "token-classification": ("ner_train.conll", "ner_eval.conll"),
    "pretraining": ("pretraining_corpus.txt", ""),
}
OPEN_LABELS = {"fill-mask": "Fill-mask", "nsp": "NSP", "ner": "NER", "classification": "Classification"}
SCHEDULERS = ("linear", "cosine", "cosine_with_restarts", "polynomial", "constant", "constant_with_warmup")
NO_PAIR = "(none)"


def plan_job(config: Any, control: TaskControl) -> tuple[Any, Any]:
    """The step plan and the planned learning rates, computed off the GUI thread."""
    from bertstudio.core.training import plan, planned_lr

    steps = plan(config)
    control.check()
    return steps, planned_lr(config.scheduler, config.learning_rate, steps.total_steps, steps.warmup_steps)


def train_job(config: Any, stop_event: threading.Event, control: TaskControl) -> Any:
    from bertstudio.core.training import train

    return train(config, control, stop_event=stop_event)


def _spin(low: int, high: int, value: int, tip: str = "") -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    box.setToolTip(tip)
    return box


def _dspin(low: float, high: float, value: float, decimals: int, step: float, tip: str = "") -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setDecimals(decimals)
    box.setRange(low, high)
    box.setSingleStep(step)
    box.setValue(value)
    box.setToolTip(tip)
    return box


class TrainTab(TaskTab):
    TASK = "pretraining"
    TITLE = "Train"
    ORDER = 90

    def build(self) -> None:
        self.model_bar.setVisible(False)  # the base model is a setting of the run, not a loaded model
        self.result: Any = None
        self.plan_result: Any = None
        self._stop_event = threading.Event()
        self._started_at = 0.0
        self.plan_runner = TaskRunner(self)  # the plan preview, separate from the run
        self.plan_runner.result.connect(self._on_plan)
        self.plan_runner.error.connect(self._on_plan_error)

        form_holder = QWidget()
        form = QFormLayout(form_holder)
        self.task = QComboBox()
        for key, label in TASK_LABELS.items():
            self.task.addItem(label, key)
        form.addRow("Task", self.task)
        self.base_model = QLineEdit()
        self.base_model.setPlaceholderText("Hub id or model folder, e.g. a BERT checkpoint")
        browse_model = QPushButton("…")
        browse_model.clicked.connect(lambda: self._browse_folder(self.base_model))
        form.addRow("Base model", self._row(self.base_model, browse_model))
        self.from_scratch = QCheckBox("From scratch (new WordPiece vocabulary from the corpus)")
        form.addRow("", self.from_scratch)
        self.scratch_box = QGroupBox("New model size")
        scratch = QFormLayout(self.scratch_box)
        self.vocab_size = _spin(100, 100_000, 3000)
        self.layers = _spin(1, 24, 2)
        self.heads = _spin(1, 32, 2)
        self.hidden = _spin(8, 4096, 128)
        self.ffn = _spin(8, 16384, 512)
        for label, widget in (("Vocabulary", self.vocab_size), ("Layers", self.layers), ("Heads", self.heads),
                              ("Hidden size", self.hidden), ("Feed-forward size", self.ffn)):
            scratch.addRow(label, widget)
        form.addRow(self.scratch_box)
        self.train_file = QLineEdit()
        browse_train = QPushButton("…")
        browse_train.clicked.connect(lambda: self._browse_file(self.train_file))
        self.demo_button = QPushButton("Demo data")
        self.demo_button.setToolTip("Use the small demo dataset for this task (a run takes about a minute on CPU)")
        self.demo_button.clicked.connect(self.use_demo_data)
        form.addRow("Training file", self._row(self.train_file, browse_train, self.demo_button))
        self.eval_file = QLineEdit()
        self.eval_file.setPlaceholderText("optional: else a share of the training file is held out")
        browse_eval = QPushButton("…")
        browse_eval.clicked.connect(lambda: self._browse_file(self.eval_file))
        form.addRow("Validation file", self._row(self.eval_file, browse_eval))
        self.eval_share = _dspin(0.0, 0.5, 0.1, 2, 0.05, "Share of the training file held out for validation")
        form.addRow("Held-out share", self.eval_share)
        self.columns_box = QGroupBox("Columns (detected; confirm)")
        columns = QFormLayout(self.columns_box)
        self.text_column, self.pair_column, self.label_column = QComboBox(), QComboBox(), QComboBox()
        columns.addRow("Text", self.text_column)
        columns.addRow("Second text", self.pair_column)
        columns.addRow("Label", self.label_column)
        form.addRow(self.columns_box)
        self.output_dir = QLineEdit()
        self.output_dir.setPlaceholderText("folder for the trained model")
        browse_out = QPushButton("…")
        browse_out.clicked.connect(lambda: self._browse_folder(self.output_dir))
        form.addRow("Output folder", self._row(self.output_dir, browse_out))

        self.scheduler = QComboBox()
        self.scheduler.addItems(SCHEDULERS)
        form.addRow("Schedule", self.scheduler)
        self.warmup_steps = _spin(0, 1_000_000, 0, "Warmup steps (win over the ratio when > 0)")
        self.warmup_ratio = _dspin(0.0, 0.99, 0.1, 2, 0.05, "Warmup as a share of all steps")
        form.addRow("Warmup steps / ratio", self._row(self.warmup_steps, self.warmup_ratio))
        self.epochs = _dspin(0.1, 1000, 3.0, 1, 1.0)
        self.max_steps = _spin(0, 10_000_000, 0, "0: train for the epochs; > 0: exactly this many steps")
        form.addRow("Epochs / max steps", self._row(self.epochs, self.max_steps))
        self.batch_size = _spin(1, 4096, 16)
        self.grad_accum = _spin(1, 1024, 1, "Gradient accumulation steps")
        form.addRow("Batch / accumulation", self._row(self.batch_size, self.grad_accum))
        self.learning_rate = _dspin(1e-7, 1.0, 5e-5, 7, 1e-5)
        self.weight_decay = _dspin(0.0, 1.0, 0.01, 4, 0.01)
        form.addRow("Learning rate / decay", self._row(self.learning_rate, self.weight_decay))
        self.seed = _spin(0, 2**31 - 1, 42)
        self.max_length = _spin(8, 8192, 128, "Maximum tokens per example; longer ones are truncated")
        form.addRow("Seed / max length", self._row(self.seed, self.max_length))
        self.eval_steps = _spin(0, 1_000_000, 0, "Evaluate every N steps (0: at the end)")
        form.addRow("Evaluate every", self.eval_steps)
        self.device = QComboBox()
        self.device.setModel(self.model_bar.device.model())  # filled by the window once torch is up
        self.precision = QComboBox()
        self.precision.addItems(["no", "fp16", "bf16"])
        self.precision.setToolTip("Mixed precision (GPU only)")
        form.addRow("Device / precision", self._row(self.device, self.precision))
        self.resume = QCheckBox("Resume from the last checkpoint of the output folder")
        form.addRow("", self.resume)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(form_holder)
        scroll.setMinimumWidth(380)

        self.plan_label = QLabel("Choose a training file to see the plan.")
        self.plan_label.setWordWrap(True)
        self.plots = TrainingPlots()
        self.progress = QProgressBar()
        self.progress.setFormat("step %v / %m")
        self.rate_label = QLabel("")
        self.start_button = QPushButton("Start")
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop after the current step and save what was trained")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        self.export_button = QPushButton("Export PNG…")
        self.export_button.clicked.connect(self._export)
        self.metrics_label = QLabel("")
        self.metrics_label.setWordWrap(True)
        self.open_buttons: dict[str, QPushButton] = {}
        open_row = QHBoxLayout()
        for key, label in OPEN_LABELS.items():
            button = QPushButton(f"Open in {label}")
            button.setVisible(False)
            button.clicked.connect(lambda _checked=False, k=key: self.open_result_in(k))
            self.open_buttons[key] = button
            open_row.addWidget(button)
        open_row.addStretch(1)
        controls = QHBoxLayout()
        controls.addWidget(self.start_button)
        controls.addWidget(self.stop_button)
        controls.addWidget(self.progress, 1)
        controls.addWidget(self.rate_label)
        controls.addWidget(self.export_button)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.plan_label)
        right_layout.addWidget(self.plots, 1)
        right_layout.addLayout(controls)
        right_layout.addWidget(self.metrics_label)
        right_layout.addLayout(open_row)
        splitter = QSplitter()
        splitter.addWidget(scroll)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        self.body.addWidget(splitter, 1)

        self._replan = QTimer(self)
        self._replan.setSingleShot(True)
        self._replan.setInterval(300)
        self._replan.timeout.connect(self.update_plan)
        for signal in (self.train_file.textChanged, self.eval_file.textChanged, self.base_model.textChanged):
            signal.connect(self._settings_changed)
        self.train_file.textChanged.connect(self._read_columns)
        for box in (self.warmup_steps, self.max_steps, self.batch_size, self.grad_accum, self.seed):
            box.valueChanged.connect(self._settings_changed)
        for dbox in (self.warmup_ratio, self.epochs, self.learning_rate, self.eval_share):
            dbox.valueChanged.connect(self._settings_changed)
        for combo in (self.scheduler, self.text_column, self.pair_column, self.label_column):
            combo.currentIndexChanged.connect(self._settings_changed)
        self.task.currentIndexChanged.connect(self._task_changed)
        self.from_scratch.toggled.connect(self._task_changed)
        self.runner.progress.connect(self._on_progress)
        self.runner.result.connect(self._on_result)
        self.runner.finished.connect(self._on_finished)
        self.runner.cancelled.connect(lambda: self.show_message("Training cancelled."))
        self._task_changed()

    @staticmethod
    def _row(*widgets: QWidget) -> QWidget:
        holder = QWidget()
        layout = QHBoxLayout(holder)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in widgets:
            layout.addWidget(widget, 1 if isinstance(widget, QLineEdit) else 0)
        return holder

    # -- settings --------------------------------------------------------------------------
    @property
    def task_key(self) -> str:
        return str(self.task.currentData())

    def _task_changed(self) -> None:
        pretraining = self.task_key == "pretraining"
        self.from_scratch.setVisible(pretraining)
        scratch = pretraining and self.from_scratch.isChecked()
        self.scratch_box.setVisible(scratch)
        self.base_model.setEnabled(not scratch)
        self.columns_box.setVisible(self.task_key == "text-classification")
        self._read_columns()
        self._settings_changed()

    def use_demo_data(self) -> None:
        train, evaluation = DEMO_FILES[self.task_key]
        self.train_file.setText(str(resource_path("datasets", train)))
        self.eval_file.setText(str(resource_path("datasets", evaluation)) if evaluation else "")

    def _read_columns(self) -> None:
        """Fill the column choices from the file header, with the detected roles selected."""
        if self.task_key != "text-classification":
            return
        from bertstudio.core.errors import BertStudioError
        from bertstudio.core.training.data import file_columns

        path = self.train_file.text().strip()
        boxes = (self.text_column, self.pair_column, self.label_column)
        for box in boxes:
            box.blockSignals(True)
            box.clear()
        try:
            if path and Path(path).is_file():
                header, detected = file_columns(path)
                self.text_column.addItems(header)
                self.pair_column.addItems([NO_PAIR, *header])
                self.label_column.addItems(header)
                self.text_column.setCurrentText(detected.text)
                self.pair_column.setCurrentText(detected.text_pair or NO_PAIR)
                self.label_column.setCurrentText(detected.label)
        except BertStudioError as error:
            self.plan_label.setText(error.message)
        finally:
            for box in boxes:
                box.blockSignals(False)

    def _settings_changed(self) -> None:
        self._replan.start()

    def config(self) -> Any:
        """The run's settings as the core's TrainConfig."""
        from bertstudio.core.training import Columns, ScratchConfig, TrainConfig

        task = self.task_key
        columns = None
        if task == "text-classification" and self.text_column.currentText() and self.label_column.currentText():
            pair = self.pair_column.currentText()
            columns = Columns(self.text_column.currentText(), self.label_column.currentText(),
                              None if pair in ("", NO_PAIR) else pair)
        scratch = None
        if task == "pretraining" and self.from_scratch.isChecked():
            scratch = ScratchConfig(self.vocab_size.value(), self.layers.value(), self.heads.value(),
                                    self.hidden.value(), self.ffn.value(), self.max_length.value())
        output = self.output_dir.text().strip() or str(
            Path.home() / "bertstudio-runs" / f"{task}-{time.strftime('%Y%m%d-%H%M%S')}")
        return TrainConfig(
            task=task, train_file=self.train_file.text().strip(), output_dir=output,
            model="" if scratch else self.base_model.text().strip(), eval_file=self.eval_file.text().strip() or None,
            eval_share=self.eval_share.value(), columns=columns, scratch=scratch,
            scheduler=self.scheduler.currentText(), warmup_steps=self.warmup_steps.value(),
            warmup_ratio=self.warmup_ratio.value(), epochs=self.epochs.value(), max_steps=self.max_steps.value(),
            batch_size=self.batch_size.value(), grad_accum=self.grad_accum.value(),
            learning_rate=self.learning_rate.value(), weight_decay=self.weight_decay.value(), seed=self.seed.value(),
            max_length=self.max_length.value(), eval_steps=self.eval_steps.value(),
            precision=self.precision.currentText(), device=self.device.currentText() or "cpu",
            resume=self.resume.isChecked(),
        )

    # -- the plan (before Start) -------------------------------------------------------------
    def update_plan(self) -> None:
        if self.runner.busy or not self.train_file.text().strip():
            return
        self.plan_runner.start(plan_job, self.config())

    def _on_plan(self, value: tuple[Any, Any]) -> None:
        steps, lrs = value
        self.plan_result = value
        self.plots.set_plan(lrs)
        self.progress.setRange(0, steps.total_steps)
        self.progress.setValue(0)
        held = f"{steps.eval_examples} validation" if steps.eval_examples else "no validation"
        self.plan_label.setText(
            f"{steps.train_examples} training and {held} examples; {steps.steps_per_epoch} steps per epoch; "
            f"{steps.total_steps} steps with {steps.warmup_steps} warmup ({self.scheduler.currentText()}).")

    def _on_plan_error(self, error: BaseException) -> None:
        self.plan_label.setText(getattr(error, "message", None) or str(error))

    # -- running ---------------------------------------------------------------------------
    def start(self) -> None:
        from bertstudio.core.errors import BertStudioError

        try:
            config = self.config()
            config.validate()
        except BertStudioError as error:
            self.show_message(f"{error.message} {error.hint}".strip(), error=True)
            return
        if not self.output_dir.text().strip():
            self.output_dir.setText(config.output_dir)
        self.plan_runner.cancel(emit=False)
        self._stop_event = threading.Event()
        self.result = None
        self.plots.clear_run()
        self.metrics_label.setText("")
        for button in self.open_buttons.values():
            button.setVisible(False)
        self._started_at = time.perf_counter()
        self.runner.start(train_job, config, self._stop_event)
        self.start_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.status.emit(f"Train: started {config.task} → {config.output_dir}")

    def stop(self) -> None:
        """End after the current step; the engine saves what was trained and returns the result."""
        self._stop_event.set()
        self.stop_button.setEnabled(False)
        self.show_message("Stopping after this step and saving…")

    def _on_progress(self, event: ProgressEvent) -> None:
        from bertstudio.core.training import TrainingEvent

        payload = event.payload
        if not isinstance(payload, TrainingEvent):
            self.rate_label.setText(event.message)
            return
        if payload.kind == "plan":
            self.progress.setRange(0, payload.max_steps)
            self.plan_label.setText(payload.message)
        elif payload.kind == "step":
            self.plots.add_step(payload.step, payload.loss, payload.learning_rate)
            self.progress.setValue(payload.step)
            rate = f"{payload.samples_per_second:.1f} samples/s" if payload.samples_per_second else ""
            eta = f"ETA {_duration(payload.eta_seconds)}" if payload.eta_seconds is not None else ""
            self.rate_label.setText("  ".join(x for x in (rate, eta) if x))
        elif payload.kind == "eval":
            self.plots.add_eval(payload.step, payload.metrics)
            self.metrics_label.setText(f"Validation at step {payload.step}: " + _format_metrics(payload.metrics))

    def _on_result(self, result: Any) -> None:
        self.result = result
        self.plots.flush()
        state = "Stopped early at" if result.stopped else "Finished at"
        self.metrics_label.setText(
            f"{state} step {result.step}/{result.max_steps}; saved to {result.output_dir}\n"
            + _format_metrics(result.metrics))
        tabs = getattr(self.window(), "task_tabs", {})
        for key, button in self.open_buttons.items():
            button.setVisible(key in result.open_in and key in tabs)
        self.clear_message()
        self.status.emit(f"Train: {state.lower()} step {result.step}; model in {result.output_dir}")

    def _on_finished(self) -> None:
        self.start_button.setEnabled(True)
        self.stop_button.setEnabled(False)

    def open_result_in(self, task: str) -> None:
        """Load the trained model in another tab and switch to it."""
        window = self.window()
        tab = getattr(window, "task_tabs", {}).get(task)
        if tab is None or self.result is None:
            return
        tab.open_model(self.result.output_dir)
        window.tabs.setCurrentWidget(tab)

    # -- helpers ---------------------------------------------------------------------------
    def _browse_file(self, target: QLineEdit) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a data file", target.text(),
                                              "Data (*.csv *.tsv *.jsonl *.json *.conll *.txt);;All files (*)")
        if path:
            target.setText(path)

    def _browse_folder(self, target: QLineEdit) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose a folder", target.text())
        if folder:
            target.setText(folder)

    def _export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export plots", "training.png", "PNG image (*.png)")
        if path:
            self.plots.export_png(path)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}:{secs:02d}" if minutes < 60 else f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


def _format_metrics(metrics: dict[str, float]) -> str:
    return ", ".join(f"{key} {value:.4f}" for key, value in metrics.items())
