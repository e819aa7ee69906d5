"""The Train tab's settings pane: the form generated from the core's configs (ui/train/form.py)
with its browse and demo buttons, From scratch, the detected columns, the label distribution and the
LoRA group, in a scroll area that narrows to FORM_MIN_WIDTH and scrolls, so a 900-pixel window keeps
the plots and Start/Stop beside it. It shows the rows the chosen task offers and reads the run's
TrainConfig back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QGroupBox, QLabel, QLineEdit, QScrollArea, QWidget

from bertstudio.core.training.base import TrainableTask
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.data import Columns
from bertstudio.core.training.distill_config import DistillConfig
from bertstudio.core.training.scratch_config import ScratchConfig
from bertstudio.ui.train import output as output_mod
from bertstudio.ui.train.distill_panel import distill_settings
from bertstudio.ui.train.form import ConfigForm
from bertstudio.ui.train.jobs import Preview
from bertstudio.ui.train.label_box import LabelBox, show_loss_rows
from bertstudio.ui.train.lines import NO_PAIR, fill_columns
from bertstudio.ui.train.lora_box import LoraBox

FORM_MIN_WIDTH = 380  # pixels: the form's least width (labels and fields still readable)
# A hand-off's form settings that belong to an earlier run and would train something else than the
# handed-over model on the handed-over data (set_training_data resets them to their defaults).
HANDOFF_RESET = ("eval_file", "max_steps", "lora_rank", "lora_alpha", "lora_dropout", "lora_targets", "teacher")


class FormPane(QScrollArea):
    """The form and the widgets the Train tab adds to it; `wanted_width` is the whole form's width."""

    def __init__(self, use_demo: Callable[[], None], browse_output: Callable[[], None],
                 task_key: Callable[[], str], show_message: Callable[..., None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form = form = ConfigForm((TrainConfig, ScratchConfig, DistillConfig))
        for name, browse in (("model", output_mod.browse_folder), ("train_file", output_mod.browse_file),
                             ("eval_file", output_mod.browse_file), ("teacher", output_mod.browse_folder)):
            field = form.field(name, QLineEdit)
            form.add_button(name, "…").clicked.connect(lambda _=False, b=browse, f=field: b(self, f))
            if name == "train_file":
                self.demo_button = form.add_button(
                    "train_file", "Demo data", "Use the small demo dataset for this task (about a minute on CPU)")
                self.demo_button.clicked.connect(use_demo)
        form.add_button("output_dir", "…").clicked.connect(browse_output)
        form.field("output_dir", QLineEdit).setPlaceholderText(
            "new folder for the trained model (default: ~/bertstudio-runs/…)")
        self.from_scratch = QCheckBox("From scratch (new WordPiece vocabulary from the corpus)")
        data_form = form.layouts["Data"]
        # Qt's stubs type getWidgetPosition's (row, role) pair as object
        model_row = cast(tuple[int, QFormLayout.ItemRole], data_form.getWidgetPosition(form.rows["model"]))[0]
        data_form.insertRow(model_row + 1, "", self.from_scratch)
        self.scratch_box = form.groups["Model size"]
        self.distill_box = form.groups["Distillation"]  # shown for a task that distils, under Data
        form.outer.insertWidget(form.outer.indexOf(form.groups["Data"]) + 1, self.distill_box)
        self.lora_box = LoraBox(form, form.field("model", QLineEdit).text, task_key, show_message, self)
        self.columns_box = QGroupBox("Columns (detected; confirm)")
        columns = QFormLayout(self.columns_box)
        self.text_column, self.pair_column, self.label_column = QComboBox(), QComboBox(), QComboBox()
        columns.addRow("Text", self.text_column)
        columns.addRow("Second text", self.pair_column)
        columns.addRow("Label", self.label_column)
        data_form.addRow(self.columns_box)
        self.columns_path = ""  # the file whose header fills the column choices
        self.label_box = LabelBox()  # the label distribution and multi-label proposal (issue 41)
        data_form.addRow(self.label_box)
        for combo in form.findChildren(QComboBox):  # a long choice ("Text classification (CSV / TSV /
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(12)  # JSONL)") no longer sets the form's least width
        self.setWidgetResizable(True)
        self.setWidget(form)
        # The whole form where there is room (the splitter's first size), yet a 900-pixel window keeps
        # the plots and Start/Stop: the form narrows to this and scrolls sideways below it.
        self.wanted_width = form.sizeHint().width() + 24
        self.setMinimumWidth(min(self.wanted_width, FORM_MIN_WIDTH))
        self._share_tip = form.widgets["eval_share"].toolTip()
        self._model_hint = form.field("model", QLineEdit).placeholderText()

    def scratch(self, trainable: TrainableTask) -> bool:
        """A new model from the corpus: offered by the task and ticked."""
        return trainable.from_scratch and self.from_scratch.isChecked()

    def show_task(self, trainable: TrainableTask) -> bool:
        """The rows the task offers (From scratch and its model size, columns, loss, distillation); for a
        distillation the model row names the student (empty: cut from the teacher). True: it distils."""
        self.from_scratch.setVisible(trainable.from_scratch)
        scratch = self.scratch(trainable)
        self.scratch_box.setVisible(scratch)
        model = self.form.field("model", QLineEdit)
        model.setEnabled(not scratch)
        self.columns_box.setVisible(trainable.columns)
        show_loss_rows(self.form, trainable)
        distils = bool(getattr(trainable, "distils", False))
        self.distill_box.setVisible(distils)
        label = self.form.layouts["Data"].labelForField(self.form.rows["model"])
        if isinstance(label, QLabel):
            label.setText("Student model" if distils else "Base model")
        model.setPlaceholderText("empty: the teacher cut to Student layers (or a smaller checkpoint with its labels)"
                                 if distils else self._model_hint)
        self.columns_path = ""
        return distils

    def held_out_changed(self) -> None:
        """With a validation file nothing is held out of the training data: the share is off, and says so."""
        has_eval = bool(self.form.value("eval_file"))
        share = self.form.widgets["eval_share"]
        share.setEnabled(not has_eval)
        share.setToolTip("Not used: the validation file is the held-out data." if has_eval else self._share_tip)

    def show_header(self, preview: Preview) -> None:
        """A new file's columns as choices, the detected ones chosen."""
        if preview.header is not None and preview.path != self.columns_path:
            fill_columns(self.text_column, self.pair_column, self.label_column, preview.header, preview.detected)
            self.columns_path = preview.path

    def chosen_columns(self, trainable: TrainableTask) -> tuple[str, ...]:
        return tuple(c.currentText() for c in (self.text_column, self.pair_column, self.label_column)
                     ) if trainable.columns else ()

    def _columns(self, trainable: TrainableTask) -> Columns | None:
        if not trainable.columns or self.columns_path != self.form.value("train_file"):
            return None  # a new file: detected in the worker
        text, pair, label = self.chosen_columns(trainable)
        return Columns(text, label, None if pair in ("", NO_PAIR) else pair) if text and label else None

    def config(self, trainable: TrainableTask, task_key: str) -> TrainConfig:
        """The run's settings as the core's TrainConfig."""
        values = self.form.values(TrainConfig)
        scratch = None
        if self.scratch(trainable):
            scratch = ScratchConfig(max_length=values["max_length"], **self.form.values(ScratchConfig))
        values.update(
            model="" if scratch else values["model"], eval_file=values["eval_file"] or None,
            device=self.form.field("device", QComboBox).currentText() or "cpu",
            output_dir=values["output_dir"] or str(Path.home() / "bertstudio-runs" / output_mod.new_run_name(task_key)))
        return TrainConfig(columns=self._columns(trainable), scratch=scratch,
                           distill=distill_settings(self.form, trainable), **values)

    def reset(self, defaults: dict[str, Any]) -> str:
        """A hand-off's: the settings of an earlier run that would train something else (its validation
        file, max steps, LoRA adapter, teacher, from scratch) back to their defaults; their labels, if any."""
        reset = [name for name in HANDOFF_RESET if name in self.form.widgets
                 and self.form.value(name) != defaults.get(name)]
        self.form.restore({name: defaults[name] for name in reset})
        labels = [self.form.options[name].label for name in reset]
        if self.from_scratch.isChecked():
            self.from_scratch.setChecked(False)
            labels.append("From scratch")
        return ", ".join(labels)
