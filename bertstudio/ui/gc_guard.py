"""Garbage collection only on the GUI thread.

Qt objects that only a reference cycle keeps alive die when the collector runs. If it runs in a
worker thread (Python's automatic collection, or the explicit `gc.collect()` that accelerate and
transformers make at the end of training), their C++ destructors run there and deadlock or crash
(seen: Trainer.train -> Accelerator.free_memory -> gc.collect -> ~QObject waiting for the GIL,
a training run that never ended). So automatic collection is off and the GUI thread collects on
a timer, as pyqtgraph's GarbageCollector does (not imported here: pyqtgraph is loaded after the
window's first paint); an explicit collect from another thread is left to that timer.
"""

from __future__ import annotations

import gc
import threading
from typing import Any

_installed: dict[str, Any] = {}


def _collect_on_gui_thread(generation: int = 2) -> int:
    if threading.current_thread() is threading.main_thread():
        return _installed["collect"](generation)
    return 0  # the GUI thread's timer collects it


def _check() -> None:
    """The generations whose counts passed Python's own thresholds, youngest first."""
    collect = _installed["collect"]
    counts, thresholds = gc.get_count(), _installed["thresholds"]
    if counts[0] > thresholds[0]:
        collect(0)
        if counts[1] > thresholds[1]:
            collect(1)
            if counts[2] > thresholds[2]:
                collect(2)


def install(interval_s: float = 1.0) -> None:
    """Idempotent; call on the GUI thread once a QApplication exists."""
    if _installed:
        return
    from PySide6.QtCore import QTimer

    _installed["collect"] = gc.collect
    _installed["thresholds"] = gc.get_threshold()
    timer = QTimer()
    timer.timeout.connect(_check)
    timer.start(int(interval_s * 1000))
    _installed["timer"] = timer
    gc.disable()
    gc.collect = _collect_on_gui_thread  # type: ignore[assignment]  # on purpose: see the docstring
