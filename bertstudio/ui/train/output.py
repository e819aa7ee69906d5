"""Where a run from the Train tab may save: the folder picker never proposes to replace the
user's own folder (a new sub-folder is proposed inside it), and asks before replacing an
earlier BERT Studio run. The core refuses the rest (core/training/saving.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QLineEdit, QMessageBox, QWidget

from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.saving import checkpoints_dir, folder_size, is_ours


def new_run_name(task: str) -> str:
    return f"{task}-{time.strftime('%Y%m%d-%H%M%S')}"


def propose(chosen: Path, task: str) -> tuple[Path, str]:
    """(folder to use, why): 'new' (does not exist or is empty), 'ours' (an earlier run: ask),
    or 'inside' (a folder of the user's: a new sub-folder inside it)."""
    if not chosen.exists() or (chosen.is_dir() and not any(chosen.iterdir())):
        return chosen, "new"
    if chosen.is_dir() and is_ours(chosen):
        return chosen, "ours"
    base = chosen if chosen.is_dir() else chosen.parent
    return base / new_run_name(task), "inside"


def safe_output(config: TrainConfig, ask: Callable[[Path], bool], say: Callable[[str], None]) -> TrainConfig | None:
    """Never replace the user's folder: a new sub-folder inside it; `ask` before replacing our run (None: no)."""
    folder, why = propose(Path(config.output_dir).expanduser(), config.task)
    if why == "inside":
        say(f"{config.output_dir} already holds other files; the model goes into a new folder inside it: {folder}")
        return replace(config, output_dir=str(folder))
    if why == "ours" and not (config.overwrite or config.resume):
        return replace(config, overwrite=True) if ask(folder) else None
    return config


def ask_replace(parent: QWidget, folder: Path) -> bool:
    """Ask before replacing an earlier run (the only kind of folder that is ever replaced)."""
    answer = QMessageBox.question(
        parent, "Replace the earlier run?",
        f"{folder} holds an earlier BERT Studio run.\nReplace it with the new model when this run ends?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
    return answer == QMessageBox.StandardButton.Yes


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def checkpoint_note(output_dir: str) -> tuple[Path, str] | None:
    """The resumable checkpoint folder a stopped run left, and a line saying where and how large."""
    folder = checkpoints_dir(output_dir)
    if not folder.is_dir() or not is_ours(folder):
        return None
    return folder, f"Resumable checkpoint kept in {folder} ({human_size(folder_size(folder))})."


def browse_file(parent: QWidget, target: QLineEdit) -> None:
    path, _ = QFileDialog.getOpenFileName(parent, "Choose a data file", target.text(),
                                          "Data (*.csv *.tsv *.jsonl *.json *.conll *.txt);;All files (*)")
    if path:
        target.setText(path)


def browse_folder(parent: QWidget, target: QLineEdit) -> None:
    folder = QFileDialog.getExistingDirectory(parent, "Choose a folder", target.text())
    if folder:
        target.setText(folder)
