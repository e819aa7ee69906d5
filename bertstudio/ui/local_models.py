"""The models folder, scanned in the background and shared by every model bar."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from bertstudio.core.progress import TaskControl
from bertstudio.ui.settings import AppSettings
from bertstudio.workers.runner import TaskRunner


def _scan(folder: str, control: TaskControl) -> list:
    from bertstudio.core.catalog import list_local_models
    from bertstudio.core.lazy_imports import import_transformers

    control.report(f"Scanning {folder}…")
    import_transformers()  # waits for a start-up import in another thread instead of racing it
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
        self._runner.error.connect(self.failed)
        self._settings = settings
        settings.models_dir_changed.connect(lambda _folder: self.rescan())

    def rescan(self) -> None:
        folder = self._settings.models_dir
        if folder:
            self._runner.start(_scan, folder)
        else:
            self._on_result([])

    def _on_result(self, models: list) -> None:
        self.models = list(models)
        self.changed.emit(self.models)
        note = getattr(models, "note", "")  # the scan stopped at its bound: say so, once, in the log
        if note:
            from bertstudio.core.errors import InputError

            self.failed.emit(InputError(note))
