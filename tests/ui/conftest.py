"""Qt test fixtures: a window on throw-away settings, and a check that no test leaks a thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QThreadPool

from bertstudio.ui.settings import AppSettings
from bertstudio.workers.runner import TaskRunner, configure_pool


@pytest.fixture(autouse=True)
def _no_dangling_threads(qapp) -> Iterator[None]:  # noqa: ANN001
    """Fail a test that leaves a pool worker or a thread running (napari's _dangling_qthreads)."""
    configure_pool()
    before = {t.ident for t in threading.enumerate()}
    yield
    TaskRunner.stop_all()
    drained = QThreadPool.globalInstance().waitForDone(20_000)
    leaked = [t.name for t in threading.enumerate() if t.ident not in before and t.is_alive() and not t.daemon
              and not t.name.startswith(("Thread-", "QThread"))]
    assert drained, "a pool worker was still running 20 s after the test ended"
    assert not leaked, f"threads left running: {leaked}"


@pytest.fixture
def settings(tmp_path: Path) -> AppSettings:
    return AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))


@pytest.fixture
def window(qtbot, settings):  # noqa: ANN001, ANN201
    from bertstudio.ui.main_window import MainWindow

    win = MainWindow(settings, confirm_close=False)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=60_000):
        win.show()
    yield win
    win.close()


def load_model_in(qtbot, tab, source: Path | str) -> None:  # noqa: ANN001
    """Load `source` in a tab's model bar and wait for it."""
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.model_bar.load(str(source))
