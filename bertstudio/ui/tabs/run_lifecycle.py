"""Run, Cancel and progress of a tab's worker, wired once for every tab that runs model work
(the template task tab, Explain, Evaluate, Tests; the What-if and Trace why dialogs, which keep Esc
to close themselves when idle): while the runner is busy Run is off and Cancel on, the progress
line shows its events, a stop request says "stopping" and turns Cancel off, a cancelled job
leaves the note "Cancelled.", and Ctrl+Enter runs, Esc cancels anywhere in the tab.

A tab keeps what is its own (what Run starts, how a result is shown) and may pass `on_running`
for the other widgets a running job must switch (Explain's head-importance buttons, say).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractButton, QDialog, QWidget

from bertstudio.core.notes import Note
from bertstudio.ui.widgets.notes_area import NotesArea
from bertstudio.ui.widgets.run_controls import ProgressLine
from bertstudio.workers.runner import TaskRunner

RUN_KEYS = ("Ctrl+Return", "Ctrl+Enter")
CANCEL_KEY = "Esc"


class RunLifecycle(QObject):
    """The one copy of a tab's run/cancel/progress wiring (see the module docstring)."""

    def __init__(
        self,
        tab: QWidget,
        runner: TaskRunner,
        run: Callable[[], None],
        run_button: QAbstractButton,
        cancel_button: QAbstractButton,
        progress: ProgressLine,
        notes: NotesArea,
        on_running: Callable[[bool], None] | None = None,
        also_cancels: Sequence[TaskRunner] = (),
        esc_cancels: bool = True,
    ) -> None:
        super().__init__(tab)
        self.runner = runner
        self.run_button, self.cancel_button = run_button, cancel_button
        self.progress, self.notes = progress, notes
        self.on_running = on_running
        self.runners = (runner, *also_cancels)  # Esc stops every tool of the tab working in the background
        cancel_button.setEnabled(False)
        run_button.clicked.connect(run)
        cancel_button.clicked.connect(self.cancel)
        runner.started.connect(lambda: self._set_running(True))
        runner.finished.connect(lambda: self._set_running(False))
        runner.progress.connect(progress.show_event)
        runner.stopping.connect(self._stopping)
        runner.cancelled.connect(lambda: notes.set_notes([Note("info", "Cancelled.")]))
        context = Qt.ShortcutContext.WidgetWithChildrenShortcut
        for keys in RUN_KEYS:
            QShortcut(QKeySequence(keys), tab, run, context=context)
        if esc_cancels:  # a dialog keeps Esc to close itself when nothing runs, and calls cancel() itself
            QShortcut(QKeySequence(CANCEL_KEY), tab, self.cancel, context=context)

    def cancel(self) -> None:
        """Stop whatever runs (once: a second Esc while it stops does nothing)."""
        for runner in self.runners:
            if runner.busy and not runner.stop_requested:
                runner.cancel()

    def _set_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        if running:
            self.notes.clear()
            self.progress.start()
        else:
            self.progress.stop()
        if self.on_running is not None:
            self.on_running(running)

    def _stopping(self) -> None:
        self.cancel_button.setEnabled(False)
        self.progress.stopping()


class JobDialog(QDialog):
    """A dialog that runs one worker job (What if, Trace why, Explain A and B): Esc cancels the
    running job and closes the dialog only when nothing runs. Subclasses set `runner` and `cancel`."""

    runner: TaskRunner

    def cancel(self) -> None:
        raise NotImplementedError

    def keyPressEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        if event.key() == Qt.Key.Key_Escape and self.runner.busy:
            self.cancel()
            return
        super().keyPressEvent(event)
