"""The Train form's LoRA group: what an adapter run would train, before Start, and Merge….

The rank, alpha, dropout and targets rows come from `TrainConfig`'s fields (ui/train/form.py),
as the CLI's flags do; this adds what a user decides on: the trainable-parameter count and the
adapter's size (counted exactly on a meta-device model in a worker, debounced, never on the GUI
thread), the target presets, and a Merge… action that writes a plain model folder in a worker.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QFileDialog, QLabel, QLineEdit, QPushButton, QSpinBox, QWidget

from bertstudio.core.training import lora
from bertstudio.workers.runner import TaskRunner

GROUP = "Adapters (LoRA)"
OFF = "Rank 0: a full fine-tune (every weight trains)."
PRESETS = ((lora.QUERY_VALUE, "attention query and value"), (lora.ALL_LINEAR, "all linear layers"))


class LoraBox(QObject):
    """Binds to the form's LoRA rows; `settings()` is what Start will train."""

    counted = Signal(str)  # the count line, once a count (or its failure) is shown
    merged = Signal(str)  # the merged model folder

    def __init__(self, form: Any, source: Callable[[], str], task: Callable[[], str],
                 tell: Callable[[str], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form, self._source, self._task, self._tell = form, source, task, tell
        self.rank: QSpinBox = form.widgets["lora_rank"]
        self.targets: QLineEdit = form.widgets["lora_targets"]
        layout = form.layouts[GROUP]
        self.preset = QComboBox()
        for value, label in PRESETS:
            self.preset.addItem(label, value)
        self.preset.addItem("named layers (type them)", "")
        self.preset.currentIndexChanged.connect(self._preset_chosen)
        layout.insertRow(layout.getWidgetPosition(form.rows["lora_targets"])[0], "Preset", self.preset)
        self.count_label = QLabel(OFF)
        self.count_label.setWordWrap(True)
        layout.addRow(self.count_label)
        self.merge_button = QPushButton("Merge…")
        self.merge_button.setToolTip("Merge a LoRA adapter folder into its base model and save a plain model folder")
        self.merge_button.clicked.connect(self._merge_dialog)
        layout.addRow(self.merge_button)
        self.count_runner, self.merge_runner = TaskRunner(self), TaskRunner(self)
        self.count_runner.result.connect(lambda counted: self._show_count(counted.describe()))
        self.count_runner.error.connect(
            lambda error: self._show_count(f"Not counted: {getattr(error, 'message', error)}"))
        self.merge_runner.result.connect(self._on_merged)
        self.merge_runner.error.connect(lambda error: self._tell(f"Merge failed: {getattr(error, 'message', error)}"))
        self.merge_runner.progress.connect(lambda event: self._tell(event.message) if event.message else None)
        self.merge_runner.started.connect(lambda: self.merge_button.setEnabled(False))
        self.merge_runner.finished.connect(lambda: self.merge_button.setEnabled(True))
        self._recount = QTimer(self)
        self._recount.setSingleShot(True)
        self._recount.setInterval(300)
        self._recount.timeout.connect(self.update_count)
        form.changed.connect(self._recount.start)

    def settings(self) -> lora.LoraSettings | None:
        values = {name: self.form.value(name) for name in ("lora_rank", "lora_alpha", "lora_dropout", "lora_targets")}
        if values["lora_rank"] <= 0:
            return None
        return lora.LoraSettings(values["lora_rank"], values["lora_alpha"], values["lora_dropout"],
                                 values["lora_targets"] or lora.QUERY_VALUE)

    def _preset_chosen(self) -> None:
        value = self.preset.currentData()
        if value:
            self.targets.setText(value)

    def update_count(self) -> None:
        """Count again for the current base model, task and settings (in a worker)."""
        settings, source = self.settings(), self._source().strip()
        if settings is None:
            self.count_runner.cancel(emit=False)
            self._show_count(OFF)
        elif not source:
            self._show_count("Choose a base model to see what the adapter trains.")
        else:
            self.count_label.setText("Counting…")
            self.count_runner.start(lora.estimate_for, source, self._task(), settings)

    def _show_count(self, text: str) -> None:
        self.count_label.setText(text)
        self.counted.emit(text)

    # -- merge ------------------------------------------------------------------------------
    def _merge_dialog(self) -> None:
        adapter = QFileDialog.getExistingDirectory(self.merge_button, "LoRA adapter folder to merge")
        if not adapter:
            return
        output, _ = QFileDialog.getSaveFileName(self.merge_button, "New folder for the merged model",
                                                str(Path(adapter).with_name(Path(adapter).name + "-merged")))
        if output:
            self.merge(adapter, output)

    def merge(self, adapter: str, output: str) -> None:
        self._tell(f"Merging {adapter}…")
        self.merge_runner.start(lora.merge_folder, adapter, output)

    def _on_merged(self, folder: Path) -> None:
        self._tell(f"Merged model saved to {folder}")
        self.merged.emit(str(folder))
