"""Guard against a Qt binding that corrupts refcounts when pool threads emit signals.

PySide6 6.12.0 does: a few hundred worker round-trips kill the process with
"Fatal Python error: none_dealloc" (or bool_dealloc). pyproject pins a release without it.
"""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = """
from PySide6.QtCore import QCoreApplication, QEventLoop
from superqt.utils import create_worker
app = QCoreApplication([])
for _ in range(1500):
    loop = QEventLoop()
    worker = create_worker(lambda: None, _start_thread=False, _ignore_errors=True)
    worker.finished.connect(loop.quit)
    worker.start()
    loop.exec()
print("survived")
"""


def test_many_worker_round_trips_do_not_crash() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0 and "survived" in done.stdout, done.stderr[-2000:]
