"""Workspaces: every tab's model, inputs and options and the window layout, in one JSON file.

File → Save workspace…/Open workspace…, and the last one saved on close and put back at
start. A file is read and validated by core/workspace_file.py before anything is applied.
Putting back never blocks: sources and inputs are set at once, but a model is only loaded
(in the model bar's worker) when its tab is first shown, and an explicit load wins over it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QObject, QSettings, QStandardPaths, QTimer, Signal
from PySide6.QtWidgets import QSplitter

from bertstudio.core import workspace_file
from bertstudio.core.json_values import dumps
from bertstudio.core.outputs import write_text
from bertstudio.core.workspace_file import FORMAT, VERSION, read  # read: the file as JSON, refused if no workspace
from bertstudio.ui import screen_fit
from bertstudio.ui.tabs.frame import ModelTab
from bertstudio.ui.tabs.tab_state import TabState
from bertstudio.ui.window_api import StudioWindow

__all__ = ["FORMAT", "VERSION", "Workspace", "capture", "read", "write"]

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
    """A tab's model, inputs and options: its state object (ui/tabs/tab_state.py) as JSON."""
    shown = tab.read_state()
    state = shown.to_json()
    state["loaded"] = shown.loaded
    state["splitters"] = [s.sizes() for s in tab.findChildren(QSplitter)]
    return state


def restore_tab(tab: Any, state: dict[str, Any]) -> None:
    """Put back inputs and options now; the model is loaded later (see Workspace)."""
    tab.apply_state(TabState.from_json(tab.TASK, state))
    for splitter, sizes in zip(tab.findChildren(QSplitter), state.get("splitters") or [], strict=False):
        if isinstance(sizes, list) and len(sizes) == splitter.count() and all(isinstance(s, int) for s in sizes):
            splitter.setSizes(sizes)


def capture(window: StudioWindow) -> dict[str, Any]:
    current = window.tabs.currentWidget()
    return {
        "format": FORMAT,
        "version": VERSION,
        "window": {"geometry": _bytes(window.saveGeometry()), "state": _bytes(window.saveState())},
        "current": next((key for key, tab in window.task_tabs.items() if tab is current), ""),
        "tabs": {key: window.workspace.saved_state(key, tab) for key, tab in window.task_tabs.items()},
    }


def write(path: str | Path, data: dict[str, Any], default: Callable[[Any], Any] | None = None) -> None:
    """Atomic (core.outputs: no half-written file), valid JSON (a NaN is null, with a note); `default`
    turns values JSON does not know into ones it does (export: paths as strings)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_text(path, dumps(data, indent=2, default=default))


class Workspace(QObject):
    """Applies workspaces to the window and loads each tab's model when the tab is first shown.

    The file is validated first (core/workspace_file.py): wrong fields are left out and named
    in one message, the rest comes back. Tabs are put back one per event-loop turn (a tab that
    reads a file to fill its column choices takes ~30 ms; all ten at once would stall the
    window), the current tab first, so its model starts loading before the others are back.
    Whatever a step raises, the restore ends: `restoring` never stays True, so saving on close
    and the next Open workspace keep working.
    """

    restored = Signal()  # every tab of the last `apply` is back
    problems = Signal(object)  # a workspace_file.Checked: what was left out of the last `apply`

    def __init__(self, window: StudioWindow) -> None:
        super().__init__(window)
        self.window = window
        self.pending: dict[str, str] = {}  # task key -> model source to load when its tab is shown
        # What each tab got back, kept until its model has loaded or it was shown without one to load:
        # a tab never opened in this run is saved as it came (its model and the layer/head its model's
        # size bounds were lost after two restarts, issue 29 #8).
        self._restored: dict[str, dict[str, Any]] = {}
        self._queue: list[tuple[str, dict[str, Any]]] = []
        self._current = ""
        self._busy = False
        self._generation = 0  # each apply() runs its own chain of steps; a newer one ends the older
        self._problems: list[str] = []
        self._explicit: set[str] = set()  # tabs asked for a model since the last apply(): that request wins
        self._watched: set[str] = set()
        self._loads_allowed = False  # set once transformers is imported (see MainWindow._on_warm)
        window.tabs.currentChanged.connect(lambda _index: QTimer.singleShot(0, self._load_current))

    @property
    def restoring(self) -> bool:
        return self._busy

    def saved_state(self, key: str, tab: Any) -> dict[str, Any]:
        """What the workspace file keeps of a tab: as restored while it has not come to life in this
        run, else its state now (with the model it is about to load, if that has not finished)."""
        if key in self._restored and not self._busy:
            return dict(self._restored[key])
        state = tab_state(tab)
        if not state["loaded"]:
            state["loaded"] = self.pending.get(key, "")
        return state

    def allow_loads(self) -> None:
        """transformers is imported: loads no longer race its lazy import (see main_window.warm_up)."""
        self._loads_allowed = True
        self._load_current()

    def apply(self, data: dict[str, Any]) -> workspace_file.Checked:
        """Validate `data`, then put back its valid parts over the next event-loop turns."""
        self._watch_model_bars()
        checked = workspace_file.validate(data, self._examples())
        clean = checked.data
        self.pending = {}
        self._restored = {}
        self._explicit = set()
        self._problems = list(checked.problems)
        self._current = clean.get("current", "")
        tabs = clean.get("tabs", {})
        order = sorted(tabs, key=lambda key: key != self._current)  # the current tab first
        self._queue = [(WINDOW, clean.get("window", {}))] + [(key, tabs[key]) for key in order]
        self._busy = True
        self._generation += 1
        generation = self._generation
        QTimer.singleShot(0, lambda: self._step(generation))
        return checked

    def _examples(self) -> dict[str, Any]:
        """What each tab writes today: the schema its saved inputs are checked against."""
        examples = {}
        for key, tab in self.window.task_tabs.items():
            try:
                examples[key] = tab.state()
            except Exception as error:  # a tab that cannot say its state is left as it is
                self.window.log.error(error, f"reading the {key} tab's state")
        return examples

    def _step(self, generation: int) -> None:
        """Put back one part; a part that fails is named, and the restore goes on."""
        if generation != self._generation:  # a newer apply() took over
            return
        if not self._queue:
            self._finish(generation)
            return
        key, state = self._queue.pop(0)
        try:
            self._restore_part(key, state)
        except Exception as error:  # a tab's bug must not leave the window "restoring" for good
            what = f"tabs.{key}" if key else "window"
            self._problems.append(f"{what} could not be restored ({type(error).__name__}: {error})")
            self.window.log.error(error, "restoring the workspace")
        finally:
            next_step = self._step if self._queue else self._finish
            QTimer.singleShot(0, lambda: next_step(generation))

    def _restore_part(self, key: str, state: dict[str, Any]) -> None:
        if key == WINDOW:
            self._restore_window(state)
            current_tab = self.window.task_tabs.get(self._current)
            if current_tab is not None:  # at once: the user sees the right tab while the rest comes back
                self.window.tabs.setCurrentWidget(current_tab)
            return
        tab = self.window.task_tabs.get(key)
        if tab is None:
            return
        restore_tab(tab, state)
        self._restored[key] = state
        loaded = state.get("loaded", "")
        info = getattr(tab, "model_info", None)  # the Train tab has no model of its own
        current = info.request.source if info is not None else ""
        if loaded and loaded != current and key not in self._explicit:
            self.pending[key] = loaded
            tab.show_pending_model(loaded)
            if tab is self.window.tabs.currentWidget():
                self._load_current()

    def _finish(self, generation: int) -> None:
        if generation != self._generation:
            return
        self._busy = False
        problems, self._problems = self._problems, []
        if problems:
            self.problems.emit(workspace_file.Checked({}, tuple(problems)))
        self._load_current()
        self.restored.emit()

    def _restore_window(self, layout: dict[str, str]) -> None:
        if layout.get("geometry"):
            self.window.restoreGeometry(QByteArray.fromBase64(layout["geometry"].encode("ascii")))
        if layout.get("state"):
            self.window.restoreState(QByteArray.fromBase64(layout["state"].encode("ascii")))
        screen_fit.clamp(self.window)  # saved on a larger screen: tabs, Log and status bar stay in reach

    def _watch_model_bars(self) -> None:
        """A model asked for explicitly (Open in…, Load, an evaluated row) wins over a pending restore."""
        for key, tab in self.window.task_tabs.items():
            bar = getattr(tab, "model_bar", None)
            if bar is not None and key not in self._watched:
                self._watched.add(key)
                bar.busy_changed.connect(lambda busy, key=key: self._on_load_started(key) if busy else None)
                bar.loaded.connect(lambda _info, key=key: self._restored.pop(key, None))

    def _on_load_started(self, key: str) -> None:
        self._explicit.add(key)
        self.pending.pop(key, None)

    def _load_current(self) -> None:
        if not self._loads_allowed:
            return
        current = self.window.tabs.currentWidget()
        for key, tab in self.window.task_tabs.items():
            if tab is current and key not in self.pending and not self._restored.get(key, {}).get("loaded"):
                self._restored.pop(key, None)  # shown with no model to wait for: what it shows is saved
            if tab is current and key in self.pending and isinstance(tab, ModelTab):
                source = self.pending.pop(key)
                tab.model_bar.load(source)  # the bar's worker: never blocks the window
