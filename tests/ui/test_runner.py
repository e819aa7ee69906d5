"""The runner tells the truth: a cancelled job stops doing work, and `busy` lasts until it has."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from bertstudio.core.progress import TaskControl
from bertstudio.workers.runner import TaskRunner


class Work:
    """A job that does 'forward passes' in a loop, checking for cancellation before each one."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.after_cancel = 0  # passes that ran although their job had been cancelled
        self.began: set[int] = set()
        self.returned: set[int] = set()
        self.cancelled_at: dict[int, float] = {}

    def job(self, number: int, passes: int, control: TaskControl) -> int:
        with self.lock:
            self.began.add(number)
        try:
            for _ in range(passes):
                control.check()
                with self.lock:
                    if number in self.cancelled_at:
                        self.after_cancel += 1
                time.sleep(0.002)  # a forward pass
            return number
        finally:
            with self.lock:
                self.returned.add(number)


def test_cancel_then_run_twenty_times_leaves_no_work_running(qtbot) -> None:  # noqa: ANN001
    runner = TaskRunner()
    work = Work()
    busy_while_thread_alive = []
    idle_with_thread_alive = []

    def check_idle() -> None:
        # `finished` means idle: every job started so far must have returned by now.
        alive = work.began - work.returned
        (idle_with_thread_alive if alive else busy_while_thread_alive).append(alive)

    runner.finished.connect(check_idle)
    for cycle in range(20):
        runner.start(work.job, cycle, 10_000)
        if cycle % 2:
            qtbot.wait(5)  # half the cycles cancel a job already running, half one not yet started
        with work.lock:
            work.cancelled_at[cycle] = time.monotonic()
        runner.cancel()
        assert runner.busy or cycle in work.returned, "not busy while the cancelled job still runs"
    with qtbot.waitSignal(runner.result, timeout=10_000) as blocker:
        runner.start(work.job, 99, 3)
    qtbot.waitUntil(lambda: not runner.busy, timeout=5_000)
    assert blocker.args == [99]
    assert work.after_cancel <= 1, f"{work.after_cancel} forward passes ran after their cancel"
    assert work.began == work.returned, "a cancelled job never returned"
    assert len(work.began) < 21, "requests cancelled before they ran should never start"
    assert not idle_with_thread_alive, f"finished while jobs still ran: {idle_with_thread_alive}"


def test_busy_until_the_thread_has_returned(qtbot) -> None:  # noqa: ANN001
    runner = TaskRunner()
    gate = threading.Event()
    left = threading.Event()

    def uncancellable(control: TaskControl) -> None:  # never checks: a C call that cannot stop
        gate.wait(5)
        left.set()

    runner.start(uncancellable)
    with qtbot.waitSignal(runner.stopping, timeout=1_000):
        runner.cancel()
    for _ in range(5):
        qtbot.wait(20)
        assert runner.busy, "idle although the job's thread has not returned"
    with qtbot.waitSignals([runner.cancelled, runner.finished], timeout=5_000):
        gate.set()
    assert left.is_set() and not runner.busy


def test_stop_all_passes_over_a_runner_whose_widget_was_deleted_and_stops_its_job(qtbot) -> None:  # noqa: ANN001
    """A panel deleted while its job runs leaves a Python runner with no C++ signals: stopping everything
    (closing the window, a test's teardown) must stop that job, not raise 'Signal source has been deleted'."""
    import shiboken6
    from PySide6.QtCore import QObject

    owner = QObject()
    runner = TaskRunner(owner)
    seen: list[TaskControl] = []
    gate = threading.Event()

    def waits(control: TaskControl) -> None:
        seen.append(control)
        gate.wait(5)

    runner.start(waits)
    qtbot.waitUntil(lambda: bool(seen), timeout=2_000)
    shiboken6.delete(owner)  # the runner's C++ side goes with its parent
    assert not shiboken6.isValid(runner)
    TaskRunner.stop_all()
    assert seen[0].stop_requested
    gate.set()


def test_newest_request_wins_and_jobs_never_overlap(qtbot) -> None:  # noqa: ANN001
    runner = TaskRunner()
    inside = []
    overlaps = []
    results = []
    lock = threading.Lock()

    def job(number: int, control: TaskControl) -> int:
        with lock:
            if inside:
                overlaps.append((inside[:], number))
            inside.append(number)
        try:
            for _ in range(200):
                control.check()
                time.sleep(0.001)
            return number
        finally:
            with lock:
                inside.remove(number)

    runner.result.connect(results.append)
    with qtbot.waitSignal(runner.finished, timeout=10_000):
        for number in range(6):
            runner.start(job, number)
    assert results == [5], "only the newest request reports"
    assert not overlaps, f"two jobs of one runner ran at once: {overlaps}"


def test_a_warning_inside_a_job_reaches_the_runner_and_the_log(qtbot) -> None:  # noqa: ANN001
    from bertstudio.ui.log_panel import LogPanel

    panel = LogPanel()
    qtbot.addWidget(panel)
    runner = TaskRunner()

    def job(control: TaskControl) -> None:
        warnings.warn("tokenizer truncated the text", UserWarning, stacklevel=1)

    with qtbot.waitSignal(runner.warned, timeout=5_000) as blocker:
        runner.start(job)
    assert "truncated" in blocker.args[0]
    assert "warning: UserWarning: tokenizer truncated the text" in panel.text()
    qtbot.waitUntil(lambda: not runner.busy, timeout=5_000)


def _forgotten_job(control: TaskControl) -> None:
    while not control.stop_requested:
        time.sleep(0.01)


@pytest.mark.skipif(os.environ.get("BERTSTUDIO_LEAK_DEMO") != "1", reason="run by the test below only")
def test_leaves_a_worker_running(qtbot) -> None:  # noqa: ANN001
    TaskRunner().start(_forgotten_job)


def test_the_leak_check_names_a_worker_left_running(tmp_path) -> None:  # noqa: ANN001
    env = {**os.environ, "BERTSTUDIO_LEAK_DEMO": "1", "QT_QPA_PLATFORM": "offscreen",
           "BERTSTUDIO_TEST_LEAK_GRACE_S": "0.5"}  # the forgotten worker never ends: no need to wait 5 s
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"{__file__}::test_leaves_a_worker_running"], capture_output=True, text=True,
                          timeout=120, env=env, cwd=Path(__file__).parents[2])
    assert done.returncode == 1, done.stdout[-3000:]
    assert "pool worker(s) still running" in done.stdout and "_forgotten_job" in done.stdout, done.stdout[-3000:]
    assert "test_runner.py" in done.stdout  # where it was started
