"""Qt test fixtures: a window on throw-away settings, and a check that no test leaks a thread."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from PySide6.QtCore import QSettings, QThreadPool

from bertstudio.ui.settings import AppSettings
from bertstudio.workers.runner import TaskRunner, configure_pool

TabT = TypeVar("TabT")

# A job may still be delivering its last signals when its test returns. The test of this check
# itself (test_runner.py) shortens it: its forgotten worker never ends, whatever the grace.
LEAK_GRACE_S = float(os.environ.get("BERTSTUDIO_TEST_LEAK_GRACE_S", "5"))


@pytest.fixture(autouse=True)
def _dangling_qthread_pool(qapp) -> Iterator[None]:  # noqa: ANN001
    """Fail a test that leaves a pool worker or a thread running, naming the job and where it was
    started (napari's _dangling_qthreads / _dangling_qthread_pool). Cleans up either way, so the
    next test starts with an empty pool."""
    from bertstudio.ui import gc_guard

    gc_guard.install()  # as the window does: Qt objects never die on a worker thread
    configure_pool()
    before = {t.ident for t in threading.enumerate()}
    yield
    deadline = time.monotonic() + LEAK_GRACE_S
    while (TaskRunner.running_jobs() or QThreadPool.globalInstance().activeThreadCount()) \
            and time.monotonic() < deadline:
        qapp.processEvents()
        time.sleep(0.01)
    leaked_jobs = TaskRunner.running_jobs()
    pool_busy = QThreadPool.globalInstance().activeThreadCount()
    TaskRunner.stop_all()
    drained = QThreadPool.globalInstance().waitForDone(20_000)
    qapp.processEvents()  # the stopped jobs' last signals, while their runners still exist
    leaked = [t.name for t in threading.enumerate() if t.ident not in before and t.is_alive() and not t.daemon
              and not t.name.startswith(("Thread-", "QThread"))]
    assert not leaked_jobs, (f"{len(leaked_jobs)} pool worker(s) still running {LEAK_GRACE_S:g} s after the "
                             "test ended:\n" + "\n".join(leaked_jobs))
    assert not pool_busy, f"{pool_busy} pool thread(s) (not started by a TaskRunner) still running after the test"
    assert drained, "a pool worker was still running 20 s after the test ended"
    assert not leaked, f"threads left running: {leaked}"


@pytest.fixture
def settings(tmp_path: Path) -> AppSettings:
    return AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))


@pytest.fixture
def window_tabs() -> tuple[str, ...] | None:
    """The tab modules (bertstudio/ui/tabs/*_tab.py) that `window` builds besides the first tab:
    None, every one of them. A test module that drives only its own tab overrides this fixture
    with that tab's module: the same MainWindow, found by the same discovery, without ~1.5 s of
    building the other tabs for every test. Window-wide tests keep the whole window."""
    return None


def only_tabs(*modules: str):  # noqa: ANN201
    """The `window_tabs` override of a test module that drives only these tabs:
    `window_tabs = only_tabs("qa_tab")`."""

    @pytest.fixture
    def window_tabs() -> tuple[str, ...]:
        return modules

    return window_tabs


def with_tabs(*modules: str):  # noqa: ANN201
    """One test's `window_tabs` (a module's own override stays for its other tests): the window builds
    the first tab and these only, about a second less than every tab. `with_tabs()`: the first tab only."""
    return pytest.mark.parametrize("window_tabs", [modules], ids=["+".join(modules) or "first tab only"])


# The Train tab and every tab its "Open in" buttons lead to (those buttons show where the tab exists).
TRAIN_AND_ITS_TARGETS = ("train_tab", "fill_mask_tab", "nsp_tab", "ner_tab", "qa_tab", "classification_tab",
                         "choice_tab")


@pytest.fixture
def window(qtbot, settings, window_tabs, monkeypatch):  # noqa: ANN001, ANN201
    from bertstudio.ui import main_window
    from bertstudio.ui.main_window import MainWindow

    if window_tabs is not None:
        known = main_window.tab_modules()
        assert set(window_tabs) <= set(known), f"no such tab module: {set(window_tabs) - set(known)}"
        monkeypatch.setattr(main_window, "tab_modules", lambda: [m for m in known if m in window_tabs])
    win = MainWindow(settings, confirm_close=False)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=60_000):
        win.show()
    yield win
    win.close()


def evaluate_tab(qtbot, settings: AppSettings):  # noqa: ANN001, ANN201
    """An Evaluate tab on its own (no window), at the size the window gives it."""
    from bertstudio.ui.local_models import LocalModelsIndex
    from bertstudio.ui.tabs.evaluate_tab import EvaluateTab

    widget = EvaluateTab(settings, LocalModelsIndex(settings))
    qtbot.addWidget(widget)
    widget.resize(1280, 800)
    return widget


def set_up_toy_classification(tab, base_model: Path, tmp_path: Path, *, eval_share: float, max_steps: int) -> None:  # noqa: ANN001
    """The Train tab set to fine-tune `base_model` as a text classifier on a 64-row toy CSV in
    `tmp_path` (saved to tmp_path/model): small batches and lengths, no evaluation during the run."""
    from tests.core.test_training import toy_csv

    tab.task.setCurrentIndex(tab.task.findData("text-classification"))
    tab.base_model.setText(str(base_model))
    tab.train_file.setText(str(toy_csv(tmp_path / "toy.csv", 64)))
    tab.eval_share.setValue(eval_share)
    tab.output_dir.setText(str(tmp_path / "model"))
    tab.max_steps.setValue(max_steps)
    tab.batch_size.setValue(4)
    tab.max_length.setValue(16)
    tab.eval_steps.setValue(0)


def load_model_in(qtbot, tab, source: Path | str) -> None:  # noqa: ANN001
    """Load `source` in a tab's model bar and wait for it."""
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.model_bar.load(str(source))


def tab_of(window, kind: type[TabT]) -> TabT:  # noqa: ANN001
    """The window's tab of class `kind`, found under its own key (`kind.TASK`), so a test names the
    class once and a tab registered under the wrong key fails here rather than deep in the test."""
    tab = window.task_tabs[kind.TASK]
    assert isinstance(tab, kind), f"{kind.TASK!r} holds a {type(tab).__name__}, not a {kind.__name__}"
    return tab


def run_tab(qtbot, tab: Any, signal: str = "result", timeout: int = 60_000, *, idle: bool = False) -> None:  # noqa: ANN001
    """Press the tab's Run button and wait for its runner's `signal` ("result", "error", "cancelled");
    with `idle`, also wait until the runner is free, so the next Run does not supersede a job that is
    still delivering its last signals."""
    with qtbot.waitSignal(getattr(tab.runner, signal), timeout=timeout):
        tab.run_button.click()
    if idle:
        qtbot.waitUntil(lambda: not tab.runner.busy, timeout=10_000)
