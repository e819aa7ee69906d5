"""Workspaces: every tab's model, inputs and options and the window layout, in one JSON file.

File → Save workspace…/Open workspace…, and the last one saved on close and put back at
start. Putting back never blocks: sources and inputs are set at once, but a model is only
loaded (in the model bar's worker) when its tab is first shown.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QObject, QSettings, QStandardPaths, QTimer, Signal
from PySide6.QtWidgets import QSplitter

from bertstudio.core.errors import InputError

if TYPE_CHECKING:
    from bertstudio.ui.main_window import MainWindow

FORMAT = "bertstudio-workspace"
VERSION = 1
LAST_NAME = "last-workspace.json"
WINDOW = ""  # the queue's key for the window layout (no task has an empty key)


def last_workspace_path(store: QSettings) -> Path:
    """Beside the settings file (a test's own ini file keeps its own workspace), else app data."""
    if store.format() == QSettings.Format.IniFormat or not sys.platform.startswith("win"):
        return Path(store.fileName()).parent / LAST_NAME
    return Path(QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)) / LAST_NAME


def _bytes(data: QByteArray) -> str:
    return bytes(data.toBase64().data()).decode("ascii")


def tab_state(tab: Any) -> dict[str, Any]:
    """A tab's model, inputs and options (each kind of tab knows its own: see ui/tabs/frame.py)."""
    state = dict(tab.workspace_state())
    info = getattr(tab, "model_info", None)
    state["loaded"] = info.request.source if info is not None else ""
    state["splitters"] = [s.sizes() for s in tab.findChildren(QSplitter)]
    return state


def restore_tab(tab: Any, state: dict[str, Any]) -> None:
    """Put back inputs and options now; the model is loaded later (see Workspace)."""
    tab.restore_workspace(state)
    for splitter, sizes in zip(tab.findChildren(QSplitter), state.get("splitters") or [], strict=False):
        if isinstance(sizes, list) and len(sizes) == splitter.count() and all(isinstance(s, int) for s in sizes):
            splitter.setSizes(sizes)


def capture(window: MainWindow) -> dict[str, Any]:
    current = window.tabs.currentWidget()
    return {
        "format": FORMAT,
        "version": VERSION,
        "window": {"geometry": _bytes(window.saveGeometry()), "state": _bytes(window.saveState())},
        "current": next((key for key, tab in window.task_tabs.items() if tab is current), ""),
        "tabs": {key: tab_state(tab) for key, tab in window.task_tabs.items()},
    }


def write(path: str | Path, data: dict[str, Any], default: Callable[[Any], Any] | None = None) -> None:
    """Atomic: a temporary file beside the target, then os.replace (no half-written file).

    `default` turns values JSON does not know into ones it does (export: paths as strings).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(data, stream, indent=2, ensure_ascii=False, default=default)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read(path: str | Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"There is no workspace file {path}.") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"{path} could not be read as a workspace: {error}.") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("tabs"), dict):
        raise InputError(f"{path} is not a BERT Studio workspace.", hint="Choose a file saved with Save workspace…")
    if int(data.get("version", 0)) > VERSION:
        raise InputError(f"{path} was saved by a newer BERT Studio (workspace version {data['version']}).")
    return data


class Workspace(QObject):
    """Applies workspaces to the window and loads each tab's model when the tab is first shown.

    Tabs are put back one per event-loop turn (a tab that reads a file to fill its column
    choices takes ~30 ms; all ten at once would stall the window for ~150 ms).
    """

    restored = Signal()  # every tab of the last `apply` is back

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.pending: dict[str, str] = {}  # task key -> model source to load when its tab is shown
        self._queue: list[tuple[str, dict[str, Any]]] = []
        self._current = ""
        self._busy = False
        window.tabs.currentChanged.connect(lambda _index: QTimer.singleShot(0, self._load_current))

    @property
    def restoring(self) -> bool:
        return self._busy

    def apply(self, data: dict[str, Any]) -> None:
        window = self.window
        layout = data.get("window") or {}
        self.pending = {}
        self._current = str(data.get("current") or "")
        starting = not self._busy
        self._busy = True
        self._queue = [(WINDOW, {name: str(layout.get(name) or "") for name in ("geometry", "state")})]
        self._queue += [(key, state) for key, state in (data.get("tabs") or {}).items()
                        if key in window.task_tabs and isinstance(state, dict)]
        if starting:
            QTimer.singleShot(0, self._step)

    def _step(self) -> None:
        """Put back one tab; the last step shows the saved current tab and loads its model."""
        if self._queue:
            key, state = self._queue.pop(0)
            tab = self.window.task_tabs.get(key)
            if key == WINDOW:
                self._restore_window(state)
            elif tab is not None:
                restore_tab(tab, state)
                loaded = str(state.get("loaded") or "")
                info = getattr(tab, "model_info", None)  # the Train tab has no model of its own
                current = info.request.source if info is not None else ""
                if loaded and loaded != current:
                    self.pending[key] = loaded
        QTimer.singleShot(0, self._step if self._queue else self._finish)

    def _finish(self) -> None:
        if self._queue:  # another apply() came in: it has its own steps
            return
        self._busy = False
        current_tab = self.window.task_tabs.get(self._current)
        if current_tab is not None:
            self.window.tabs.setCurrentWidget(current_tab)
        self._load_current()
        self.restored.emit()

    def _restore_window(self, layout: dict[str, str]) -> None:
        if layout["geometry"]:
            self.window.restoreGeometry(QByteArray.fromBase64(layout["geometry"].encode("ascii")))
        if layout["state"]:
            self.window.restoreState(QByteArray.fromBase64(layout["state"].encode("ascii")))

    def _load_current(self) -> None:
        current = self.window.tabs.currentWidget()
        for key, tab in self.window.task_tabs.items():
            if tab is current and key in self.pending:
                tab.model_bar.load(self.pending.pop(key))  # the bar's worker: never blocks the window
