"""What the Train tab writes in its lines and column choices: the plan, the rate and ETA, and
the columns detected in a classification file."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QComboBox

NO_PAIR = "(none)"
NO_PLAN = "Choose a training file to see the plan."


def plan_text(steps: Any, scheduler: str) -> str:
    held = f"{steps.eval_examples} validation" if steps.eval_examples else "no validation"
    return (f"{steps.train_examples} training and {held} examples; {steps.steps_per_epoch} steps per epoch; "
            f"{steps.total_steps} steps with {steps.warmup_steps} warmup ({scheduler})."
            + "".join(f" {note}" for note in steps.notes))


def fill_columns(text: QComboBox, pair: QComboBox, label: QComboBox, header: list[str], detected: Any) -> None:
    """The file's columns as choices, the detected ones chosen (no change signal: not an edit)."""
    boxes = (text, pair, label)
    for box in boxes:
        box.blockSignals(True)
        box.clear()
    text.addItems(header)
    pair.addItems([NO_PAIR, *header])
    label.addItems(header)
    text.setCurrentText(detected.text)
    pair.setCurrentText(detected.text_pair or NO_PAIR)
    label.setCurrentText(detected.label)
    for box in boxes:
        box.blockSignals(False)


def rate_text(event: Any) -> str:
    """Samples/s and ETA as the engine measured them over its recent window of steps."""
    rate = f"{event.samples_per_second:.1f} samples/s" if event.samples_per_second else ""
    eta = f"ETA {duration(event.eta_seconds)}" if event.eta_seconds is not None else ""
    return "  ".join(x for x in (rate, eta) if x)


def duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes}:{secs:02d}" if minutes < 60 else f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"
