"""Qt objects die on the GUI thread only, whoever calls gc.collect()."""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QObject

from bertstudio.ui import gc_guard


class _Cycle(QObject):
    destroyed_on: list[str] = []

    def __init__(self) -> None:
        super().__init__()
        self.me = self  # only a reference cycle keeps it alive
        self.destroyed.connect(lambda *_: None)

    def __del__(self) -> None:
        _Cycle.destroyed_on.append(threading.current_thread().name)


def test_a_worker_collect_leaves_qt_garbage_to_the_gui_thread(qapp) -> None:  # noqa: ANN001
    gc_guard.install()
    assert not gc.isenabled()  # no automatic collection on whatever thread allocates
    _Cycle.destroyed_on.clear()
    _Cycle()
    worker = threading.Thread(target=gc.collect, name="worker")
    worker.start()
    worker.join(5)
    assert not worker.is_alive() and _Cycle.destroyed_on == []
    gc.collect()  # the GUI thread (here: the test's main thread), as the timer does
    assert _Cycle.destroyed_on == [threading.main_thread().name]
