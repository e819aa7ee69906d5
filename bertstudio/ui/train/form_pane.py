"""The Train tab's settings pane: the form generated from the core's configs (ui/train/form.py)
with its browse and demo buttons, From scratch, the detected columns and the LoRA group, in a
scroll area that narrows to FORM_MIN_WIDTH and scrolls, so a 900-pixel window keeps the plots and
Start/Stop beside it."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QGroupBox, QScrollArea, QWidget

from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.distill_config import DistillConfig
from bertstudio.core.training.scratch_config import ScratchConfig
from bertstudio.ui.train import output as output_mod
from bertstudio.ui.train.form import ConfigForm
from bertstudio.ui.train.lora_box import LoraBox

FORM_MIN_WIDTH = 380  # pixels: the form's least width (labels and fields still readable)


class FormPane(QScrollArea):
    """The form and the widgets the Train tab adds to it; `wanted_width` is the whole form's width."""

    def __init__(self, use_demo: Callable[[], None], browse_output: Callable[[], None],
                 task_key: Callable[[], str], show_message: Callable[..., None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form = form = ConfigForm((TrainConfig, ScratchConfig, DistillConfig))
        for name, browse in (("model", output_mod.browse_folder), ("train_file", output_mod.browse_file),
                             ("eval_file", output_mod.browse_file), ("teacher", output_mod.browse_folder)):
            field = form.line(name)
            form.add_button(name, "…").clicked.connect(lambda _=False, b=browse, f=field: b(self, f))
            if name == "train_file":
                self.demo_button = form.add_button(
                    "train_file", "Demo data", "Use the small demo dataset for this task (about a minute on CPU)")
                self.demo_button.clicked.connect(use_demo)
        form.add_button("output_dir", "…").clicked.connect(browse_output)
        form.line("output_dir").setPlaceholderText("new folder for the trained model (default: ~/bertstudio-runs/…)")
        self.from_scratch = QCheckBox("From scratch (new WordPiece vocabulary from the corpus)")
        data_form = form.layouts["Data"]
        # Qt's stubs type getWidgetPosition's (row, role) pair as object
        model_row = cast(tuple[int, QFormLayout.ItemRole], data_form.getWidgetPosition(form.rows["model"]))[0]
        data_form.insertRow(model_row + 1, "", self.from_scratch)
        self.scratch_box = form.groups["Model size"]
        self.distill_box = form.groups["Distillation"]  # shown for a task that distils, under Data
        form.outer.insertWidget(form.outer.indexOf(form.groups["Data"]) + 1, self.distill_box)
        self.lora_box = LoraBox(form, form.line("model").text, task_key, show_message, self)
        self.columns_box = QGroupBox("Columns (detected; confirm)")
        columns = QFormLayout(self.columns_box)
        self.text_column, self.pair_column, self.label_column = QComboBox(), QComboBox(), QComboBox()
        columns.addRow("Text", self.text_column)
        columns.addRow("Second text", self.pair_column)
        columns.addRow("Label", self.label_column)
        data_form.addRow(self.columns_box)
        for combo in form.findChildren(QComboBox):  # a long choice ("Text classification (CSV / TSV /
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(12)  # JSONL)") no longer sets the form's least width
        self.setWidgetResizable(True)
        self.setWidget(form)
        # The whole form where there is room (the splitter's first size), yet a 900-pixel window keeps
        # the plots and Start/Stop: the form narrows to this and scrolls sideways below it.
        self.wanted_width = form.sizeHint().width() + 24
        self.setMinimumWidth(min(self.wanted_width, FORM_MIN_WIDTH))
