"""Closing the window while work runs: ask about a training run, cancel the rest, exit cleanly.

napari's closeEvent confirms and cancels; we also wait for the work to end, but never on the
GUI thread for more than a few hundred ms: the close is postponed (the window hidden, or kept
showing "Saving…" for a training run) and the event loop keeps delivering the workers' last
signals, so no thread outlives its runner and nothing prints "Signal source has been deleted".
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QThreadPool, QTimer
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QMessageBox

from bertstudio.workers.runner import TaskRunner

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

log = logging.getLogger(__name__)

SAVE, FINISH, STAY = "save", "finish", "stay"
BLOCK_MS = 300  # the longest the GUI thread waits inside closeEvent
QUICK_DEADLINE_S = 5.0  # cancelled jobs (loads, predictions) get this long before we exit anyway
TRAINING_DEADLINE_S = 600.0  # a training run being stopped and saved


def training_tab(window: Any) -> Any | None:
    """The tab whose run must be saved, not thrown away, when the window closes."""
    tabs = getattr(window, "task_tabs", {})
    return next((tab for tab in tabs.values()
                 if callable(getattr(tab, "stop_and_save", None))), None)


def training_running(tab: Any | None) -> bool:
    if tab is None:
        return False
    return bool(tab.is_running() if hasattr(tab, "is_running") else tab.runner.busy)


def ask_about_training(window: QMainWindow) -> str:
    box = QMessageBox(window)
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle("Training in progress")
    box.setText("A training run is still going.")
    box.setInformativeText("Stop it now and save what was trained, or let it finish and quit then?")
    save = box.addButton("Stop and save", QMessageBox.ButtonRole.AcceptRole)
    finish = box.addButton("Keep running, quit when done", QMessageBox.ButtonRole.ActionRole)
    stay = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(save)
    box.setEscapeButton(stay)
    box.exec()
    clicked = box.clickedButton()
    return SAVE if clicked is save else FINISH if clicked is finish else STAY


class CloseGuard(QObject):
    """Decides what a close request does; `window.closeEvent` asks `accept_now(event)`."""

    def __init__(self, window: QMainWindow, confirm: bool = True) -> None:
        super().__init__(window)
        self.window = window
        self.confirm = confirm
        self.ask = ask_about_training  # tests replace it
        self._ready = False
        self._waiting = False
        self._deadline = 0.0
        self._keep: TaskRunner | None = None
        self._tab: Any = None
        self._choice = ""
        self._timer = QTimer(self)
        self._timer.setInterval(50)
        self._timer.timeout.connect(self._poll)

    def accept_now(self, event: QCloseEvent) -> bool:
        """True: close now. False: the event was ignored (the user stays, or we close when work ends)."""
        if self._ready:
            return True
        if self._waiting:
            if self._keep is not None and self._tab is not None and self._choice == FINISH:
                self._choice = SAVE  # closing again while a run finishes: stop it now and save
                self._tab.stop_and_save()  # after the current step; the engine saves what was trained
                self.window.statusBar().showMessage("Stopping the training run and saving what was trained…")
            event.ignore()
            return False
        tab = training_tab(self.window)
        choice = ""
        if tab is not None and training_running(tab):
            choice = self.ask(self.window) if self.confirm else SAVE
            if choice == STAY:
                event.ignore()
                return False
            self._keep, self._tab, self._choice = tab.runner, tab, choice
            if choice == SAVE:
                tab.stop_and_save()
        TaskRunner.stop_all(keep=(self._keep,) if self._keep is not None else ())
        if not TaskRunner.any_busy() or self._settle():
            return True
        event.ignore()
        self._waiting = True
        if self._keep is None:
            self.window.hide()  # nothing to watch: the window goes at once, the process a moment later
            self._deadline = time.monotonic() + QUICK_DEADLINE_S
        else:
            central = self.window.centralWidget()
            if central is not None:
                central.setEnabled(False)
            message = ("Stopping the training run and saving what was trained; BERT Studio quits when it is saved."
                       if choice == SAVE else "BERT Studio quits when the training run has finished and saved.")
            self.window.statusBar().showMessage(message)
            self._deadline = time.monotonic() + TRAINING_DEADLINE_S
        self._timer.start()
        return False

    def _settle(self) -> bool:
        """Up to BLOCK_MS for cancelled jobs that end at their next check; True if all did."""
        if self._keep is not None and self._keep.busy:
            return False
        return QThreadPool.globalInstance().waitForDone(BLOCK_MS)  # their last signals come after we close

    def _poll(self) -> None:
        late = time.monotonic() > self._deadline
        if TaskRunner.any_busy() and not late:
            return
        if late:
            log.warning("closing although these jobs have not ended: %s", TaskRunner.running_jobs())
        self._timer.stop()
        self._ready = True
        self.window.close()
