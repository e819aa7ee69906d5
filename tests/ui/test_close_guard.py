"""Closing mid-training asks: stop and save / keep running, quit when done / cancel (issue 10 item 3).

A stand-in Train tab keeps these tests fast: its run is a loop that stops, like the engine, when
Stop is pressed or the runner cancels it, and then "saves" (the real save: tests/e2e)."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtWidgets import QMainWindow, QWidget

from bertstudio.core.progress import TaskControl
from bertstudio.ui import shutdown
from bertstudio.workers.runner import TaskRunner


class StandInTrainTab(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.runner = TaskRunner(self)
        self._stop_event = threading.Event()
        self.saved: list[str] = []
        self.steps = 0
        self.save_gate: threading.Event | None = None  # a test holds the save until it sets this

    def _run(self, steps: int, control: TaskControl) -> None:
        for _ in range(steps):
            if control.stop_requested or self._stop_event.is_set():
                break
            self.steps += 1
            time.sleep(0.01)
        time.sleep(0.2)  # saving
        if self.save_gate is not None:
            self.save_gate.wait(10)
        self.saved.append("stopped" if self.steps < steps else "finished")

    def start(self, steps: int = 100_000) -> None:
        self.runner.start(self._run, steps)

    def stop_and_save(self) -> bool:  # how shutdown finds the Train tab: a public method, not a private field
        self._stop_event.set()
        return True


class Window(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.train = StandInTrainTab()
        self.setCentralWidget(self.train)
        self.task_tabs = {"pretraining": self.train}
        self.other = TaskRunner(self)
        self.guard = shutdown.CloseGuard(self)
        self.closed = False

    def closeEvent(self, event) -> None:  # noqa: ANN001, N802
        if self.guard.accept_now(event):
            self.closed = True
            event.accept()


@pytest.fixture
def win(qtbot):  # noqa: ANN001, ANN201
    window = Window()
    qtbot.addWidget(window)
    window.show()
    return window


def _forever(control: TaskControl) -> None:
    while not control.stop_requested:
        time.sleep(0.005)


def test_cancel_keeps_the_window_and_the_run(qtbot, win) -> None:  # noqa: ANN001
    win.guard.ask = lambda _w: shutdown.STAY
    win.train.start()
    qtbot.waitUntil(lambda: win.train.steps > 3, timeout=5_000)
    assert not win.close()
    assert win.isVisible() and win.train.runner.busy and not win.closed
    win.train.stop_and_save()
    qtbot.waitUntil(lambda: not win.train.runner.busy, timeout=5_000)


def test_stop_and_save_then_quit(qtbot, win) -> None:  # noqa: ANN001
    win.guard.ask = lambda _w: shutdown.SAVE
    win.train.start()
    win.other.start(_forever)  # a prediction running beside it is cancelled
    qtbot.waitUntil(lambda: win.train.steps > 3, timeout=5_000)
    gate = win.train.save_gate = threading.Event()  # the save cannot end before the test allows it
    win.close()
    assert win.train.saved == [], "closeEvent waited for the save (it blocked the GUI thread)"
    assert win.isVisible() and "saving" in win.statusBar().currentMessage()
    gate.set()
    qtbot.waitUntil(lambda: win.closed, timeout=10_000)
    assert win.train.saved == ["stopped"] and not TaskRunner.any_busy()


def test_keep_running_quits_when_the_run_has_finished(qtbot, win) -> None:  # noqa: ANN001
    win.guard.ask = lambda _w: shutdown.FINISH
    win.train.start(steps=60)
    win.close()
    assert win.isVisible() and not win.closed and win.train.runner.busy
    qtbot.waitUntil(lambda: win.closed, timeout=10_000)
    assert win.train.saved == ["finished"]


def test_without_training_the_window_goes_at_once(qtbot, win) -> None:  # noqa: ANN001
    asked = []
    win.guard.ask = lambda _w: asked.append(1) or shutdown.STAY

    gate, ended = threading.Event(), []

    def uncancellable(control: TaskControl) -> None:
        gate.wait(10)  # a native call that cannot check for cancellation, until the test lets it end
        ended.append(1)

    win.other.start(uncancellable)
    win.close()
    assert not ended and not asked  # close returned while the work still ran: it did not wait for it
    assert not win.isVisible() and not win.closed  # hidden now, closed when the work has ended
    gate.set()
    qtbot.waitUntil(lambda: win.closed, timeout=5_000)
    assert not win.other.busy
