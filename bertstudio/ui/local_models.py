"""The models folder, scanned in the background and shared by every model bar."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from bertstudio.core.progress import ProgressEvent, TaskControl
from bertstudio.ui.settings import AppSettings
from bertstudio.workers.runner import TaskRunner


def _scan(folder: str, control: TaskControl) -> list:
    """The folders at once (a progress payload), then each judged by its config.json and safetensors
    header (no torch, no transformers: it never waits for the start-up import)."""
    from bertstudio.core.catalog import list_local_models

    control.report(f"Listing {folder}…", None, list_local_models(Path(folder), judge=False))
    return list_local_models(Path(folder))


class LocalModelsIndex(QObject):
    """Re-scans when the folder setting changes; `changed` carries a list of core LocalModel."""

    changed = Signal(list)
    failed = Signal(object)

    def __init__(self, settings: AppSettings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.models: list = []
        self._runner = TaskRunner(self)
        self._runner.result.connect(self._on_result)
        self._runner.progress.connect(self._on_progress)
        self._runner.error.connect(self.failed)
        self._settings = settings
        settings.models_dir_changed.connect(lambda _folder: self.rescan())

    def rescan(self) -> None:
        """List and judge the folder's models."""
        folder = self._settings.models_dir
        if folder:
            self._runner.start(_scan, folder)
        else:
            self._on_result([])

    def list_now(self) -> None:
        """List the folder's models at start, from their config.json, then judge their heads: neither
        needs transformers (the list stayed empty for 20 s on a busy machine while it was imported)."""
        folder = self._settings.models_dir
        if folder and not self.models:
            self._runner.start(_scan, folder)

    def _on_progress(self, event: ProgressEvent) -> None:
        if isinstance(event.payload, list):  # the folders, listed before they are judged
            self.models = list(event.payload)
            self.changed.emit(self.models)

    def _on_result(self, models: list) -> None:
        self.models = list(models)
        self.changed.emit(self.models)
        note = getattr(models, "note", "")  # the scan stopped at its bound: say so, once, in the log
        if note:
            from bertstudio.core.errors import InputError

            self.failed.emit(InputError(note))
