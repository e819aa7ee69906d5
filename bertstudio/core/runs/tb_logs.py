"""TensorBoard event files beside our own log, so a user's own tooling reads every run.

Trainer writes them (`report_to=["tensorboard"]`) under its output folder, which for us is the
run's `<output>.checkpoints` folder: `runs/<time>_<host>/`. They are copied into the model
folder (`<output>/runs/`) with the model, so they outlive the checkpoints; a resumed run adds
its own subfolder beside the first. Only when the tensorboard package is installed.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

LOG_DIR = "runs"  # Trainer's default logging folder under its output_dir (transformers' default_logdir)


def available() -> bool:
    """Whether the tensorboard package is importable (torch's SummaryWriter needs it)."""
    try:
        return importlib.util.find_spec("tensorboard") is not None
    except (ImportError, ValueError):
        return False


def report_to() -> list[str] | str:
    """TrainingArguments' report_to: TensorBoard when it is installed, else nothing."""
    return ["tensorboard"] if available() else "none"


def close_writers(trainer: Any) -> None:
    """Close Trainer's TensorBoard writers (their files complete, their writer threads ended).
    Trainer closes them at the end of training but reopens one for a later evaluate()."""
    handler = getattr(trainer, "callback_handler", None)
    for callback in getattr(handler, "callbacks", ()):
        writer = getattr(callback, "tb_writer", None)
        if writer is not None and callable(getattr(writer, "close", None)):
            writer.close()
            callback.tb_writer = None


def copy_logs(checkpoints: Path, model_folder: Path) -> None:
    """The run's TensorBoard files into the model folder being saved (nothing if there are none)."""
    source = checkpoints / LOG_DIR
    if source.is_dir():
        shutil.copytree(source, model_folder / LOG_DIR, dirs_exist_ok=True)
