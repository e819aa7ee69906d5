"""What a finished or stopped run leaves: its metrics, where the resumable checkpoint folder
is and how large (with a button that deletes that folder and nothing else), "Open in…" the
tabs that load the model, and "Evaluate…" where the window offers it. The lines that hold a path
are elided (whole in the tooltip): a long output folder never widens the window."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from bertstudio.ui.train import output as output_mod
from bertstudio.ui.widgets.elided_label import ElidedLabel


def open_targets() -> dict[str, str]:
    """Spec key -> "Open in <title>" for every task a trained model can open in, in tab order."""
    from bertstudio.core.tasks.spec import all_specs
    from bertstudio.core.training.trainable import TRAINABLE

    opened = {key for trainable in TRAINABLE.values() for key in trainable.open_in}
    return {spec.key: f"Open in {spec.title}" for spec in all_specs().values() if spec.key in opened}


def format_metrics(metrics: dict[str, float]) -> str:
    return ", ".join(f"{key} {value:.4f}" for key, value in metrics.items())


CHECKPOINT_ACTION = "Continue it with Resume (beside Stop), or delete it."


class ResultPanel(QWidget):
    open_in = Signal(str)  # an app task key
    evaluate = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: Any = None
        self.origin_label = ElidedLabel("")  # which run this is: "Run of <base> on <file> → <folder>"
        self.summary_label = ElidedLabel("")  # where it was saved: a path, one line
        self.metrics_label = QLabel("")
        self.metrics_label.setWordWrap(True)
        self.checkpoint_label = ElidedLabel("")  # the folder and its size: a path, one line
        # what to do with it, on its own line beside Delete: never elided (issue 40: "Continue it with…")
        self.checkpoint_action = QLabel(CHECKPOINT_ACTION)
        self.note_label = ElidedLabel("")  # what the run itself said at the end (early stopping's best step)
        self.delete_checkpoints = QPushButton("Delete checkpoints")
        self.delete_checkpoints.setToolTip("Delete the resumable checkpoint folder this run left (nothing else)")
        self.delete_checkpoints.clicked.connect(self.delete_checkpoint_folder)
        self.open_buttons: dict[str, QPushButton] = {}
        open_row = QHBoxLayout()
        for key, label in open_targets().items():
            button = QPushButton(label)
            button.clicked.connect(lambda _checked=False, k=key: self.open_in.emit(k))
            self.open_buttons[key] = button
            open_row.addWidget(button)
        self.evaluate_button = QPushButton("Evaluate…")
        self.evaluate_button.setToolTip("Score the trained model on the validation file in the Evaluate view")
        self.evaluate_button.clicked.connect(self.evaluate)
        open_row.addWidget(self.evaluate_button)
        open_row.addStretch(1)
        checkpoint_row = QHBoxLayout()
        checkpoint_row.addWidget(self.checkpoint_action)
        checkpoint_row.addStretch(1)
        checkpoint_row.addWidget(self.delete_checkpoints)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for line in self._lines():
            layout.addWidget(line)
        layout.addLayout(checkpoint_row)
        layout.addLayout(open_row)
        self.clear()

    def clear(self) -> None:
        self.result = None
        for line in self._lines():
            line.setText("")
        self.checkpoint_action.setVisible(False)
        for button in (*self.open_buttons.values(), self.evaluate_button, self.delete_checkpoints):
            button.setVisible(False)

    def _lines(self) -> tuple[QLabel, ...]:
        """The run's lines, top to bottom: which run, where saved, metrics, its note, the checkpoint."""
        return self.origin_label, self.summary_label, self.metrics_label, self.note_label, self.checkpoint_label

    def show_eval(self, step: int, metrics: dict[str, float]) -> None:
        self.metrics_label.setText(f"Validation at step {step}: " + format_metrics(metrics))

    def show_note(self, text: str) -> None:
        self.note_label.setText(text)

    def show_result(self, result: Any, can_open: Callable[[str], bool], can_evaluate: bool, origin: str = "") -> None:
        """`origin`: the line that says which run the result belongs to (issue 29)."""
        self.result = result
        self.origin_label.setText(origin)
        state = "Stopped early at" if result.stopped else "Finished at"
        self.summary_label.setText(f"{state} step {result.step}/{result.max_steps}; saved to {result.output_dir}")
        self.metrics_label.setText(format_metrics(result.metrics))
        note = output_mod.checkpoint_note(result.output_dir) if result.checkpoints_dir else None
        self.checkpoint_label.setText(note[1] if note else "")
        self.checkpoint_action.setVisible(note is not None)
        self.delete_checkpoints.setVisible(note is not None)
        for key, button in self.open_buttons.items():
            button.setVisible(key in result.open_in and can_open(key))
        self.evaluate_button.setVisible(can_evaluate)

    def delete_checkpoint_folder(self) -> None:
        """Delete the resumable checkpoints of the last run: only that folder, which we created."""
        from bertstudio.core.training.saving import checkpoints_dir, remove_ours

        if self.result is None:
            return
        removed = remove_ours(checkpoints_dir(self.result.output_dir))
        self.checkpoint_label.setText("Checkpoint folder deleted." if removed else "")
        self.checkpoint_action.setVisible(False)
        self.delete_checkpoints.setVisible(False)
