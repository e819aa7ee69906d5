"""Garbage collection only on the GUI thread.

Qt objects that only a reference cycle keeps alive die when the collector runs. If it runs in a
worker thread (Python's automatic collection, or the explicit `gc.collect()` that accelerate and
transformers make at the end of training), their C++ destructors run there and deadlock or crash
(seen: Trainer.train -> Accelerator.free_memory -> gc.collect -> ~QObject waiting for the GIL,
a training run that never ended). So automatic collection is off and the GUI thread collects on
a timer (pyqtgraph's GarbageCollector); an explicit collect from another thread is left to that
timer, a moment later.
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


def install(interval_s: float = 1.0) -> None:
    """Idempotent; call on the GUI thread once a QApplication exists."""
    if _installed:
        return
    from pyqtgraph.util.garbage_collector import GarbageCollector

    _installed["collect"] = gc.collect
    _installed["collector"] = GarbageCollector(interval=interval_s)  # disables automatic collection
    gc.collect = _collect_on_gui_thread  # type: ignore[assignment]
