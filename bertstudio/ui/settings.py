"""Settings remembered across runs (QSettings), kept apart from the widgets that show them."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QSettings, QStandardPaths, Signal

from bertstudio.core.errors import InputError
from bertstudio.core.limits import check_count
from bertstudio.core.workspace_file import MAX_PIXELS


class AppSettings(QObject):
    """The models folder, the last source per task, the device. Tests pass their own QSettings."""

    models_dir_changed = Signal(str)

    def __init__(self, store: QSettings | None = None, models_dir_override: str | None = None) -> None:
        super().__init__()
        self._store = store or QSettings("BERT Studio", "BERT Studio")
        self._override = models_dir_override

    @property
    def store(self) -> QSettings:
        """The QSettings underneath, for the parts that keep their own keys (theme, last workspace)
        and for syncing it to disk before a fast exit."""
        return self._store

    @property
    def models_dir(self) -> str:
        """--models-dir / BERTSTUDIO_MODELS_DIR win for this run; otherwise the remembered folder."""
        if self._override:
            return self._override
        return str(self._store.value("models_dir", "") or "")

    def set_models_dir(self, folder: str) -> None:
        self._override = None
        self._store.setValue("models_dir", folder)
        self.models_dir_changed.emit(folder)

    def last_source(self, task: str) -> str:
        return str(self._store.value(f"source/{task}", "") or "")

    def set_last_source(self, task: str, source: str) -> None:
        self._store.setValue(f"source/{task}", source)

    @property
    def device(self) -> str:
        return str(self._store.value("device", "") or "")

    def set_device(self, device: str) -> None:
        self._store.setValue("device", device)

    def save_path(self, name: str) -> str:
        """Where a Save dialog opens: the folder last saved to, else the user's documents (a bare name
        opened it in whatever folder the app was started from, often the repository)."""
        documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
        for folder in (str(self._store.value("last_save_folder", "") or ""), documents):
            if folder and Path(folder).is_dir():
                return str(Path(folder) / name)
        return str(Path.home() / name)

    def remember_save(self, path: str) -> None:
        """The folder of a chosen save path, for the next Save dialog."""
        if path:
            self._store.setValue("last_save_folder", str(Path(path).parent))

    def splitter_sizes(self, key: str) -> list[int]:
        """The sizes a splitter was left at (a tab's inputs vs results), [] if never moved."""
        value = self._store.value(f"splitter/{key}", "") or ""
        text = ",".join(map(str, value)) if isinstance(value, list) else str(value)  # ini reads "1,2" as a list
        try:
            return [check_count(size, "a splitter size", 0, MAX_PIXELS) for size in text.split(",") if size.strip()]
        except InputError:  # a hand-edited settings file: the default layout, not an overflow in Qt
            return []

    def set_splitter_sizes(self, key: str, sizes: list[int]) -> None:
        self._store.setValue(f"splitter/{key}", ",".join(str(int(size)) for size in sizes))
