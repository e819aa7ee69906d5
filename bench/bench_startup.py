"""Start-up: time from launching a fresh interpreter to the window on screen, and check that the
models folder list is then filled without an error.

Each run is a new process (what a person waits for: interpreter, Qt, our imports, the first
paint), on throw-away settings with the test models as the models folder. The reference is a
bare PySide6 QMainWindow shown the same way, so the ratio is what the app adds. The target is
under 0.5 s on a quiet machine.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import MODELS, Row

RUNS = 5
TARGET_S = 0.5
ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import os, sys
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication(sys.argv[:1])
if sys.argv[1] == "bare":
    window = QMainWindow()
    window.resize(1180, 780)
    QTimer.singleShot(0, lambda: (print("shown", flush=True), window.close()))
    window.show()
    app.exec()
    os._exit(0)
from bertstudio.ui.main_window import MainWindow
from bertstudio.ui.settings import AppSettings
from bertstudio.workers.runner import configure_pool, shutdown
configure_pool()
settings = AppSettings(QSettings(sys.argv[2], QSettings.Format.IniFormat), models_dir_override=sys.argv[3])
window = MainWindow(settings, confirm_close=False)
window.shown.connect(lambda: print("shown", flush=True))
def listed(models):
    print(f"models {len(models)}", flush=True)
    QTimer.singleShot(0, window.close)
def failed(error):
    print("error " + (getattr(error, "message", None) or repr(error)).replace("\n", " "), flush=True)
    QTimer.singleShot(0, window.close)
window.models_index.changed.connect(listed)
window.models_index.failed.connect(failed)
QTimer.singleShot(60_000, window.close)
window.show()
app.exec()
shutdown(3_000)
os._exit(0)
"""


def _launch(kind: str, settings_file: str) -> tuple[float, str]:
    """Seconds from process start to "shown", and the child's last line (the models list)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", CHILD, kind, settings_file, str(MODELS)],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=ROOT)
    assert child.stdout is not None
    shown, last = float("nan"), ""
    for line in child.stdout:
        if line.startswith("shown"):
            shown = time.perf_counter() - start
        last = line.strip() or last
    child.wait(timeout=120)
    return shown, last


def rows() -> list[Row]:
    with tempfile.TemporaryDirectory() as folder:
        settings = str(Path(folder) / "settings.ini")
        _launch("app", settings)  # warm the disk cache once, as a second start would be
        ours, bare, lines = [], [], []
        for _ in range(RUNS):  # alternately, so drift hits both alike
            shown, last = _launch("app", settings)
            ours.append(shown)
            lines.append(last)
            bare.append(_launch("bare", settings)[0])
    median = statistics.median(ours)
    errors = [line for line in lines if not line.startswith("models ")]
    listed = lines[-1] if not errors else f"MODELS FOLDER: {errors[0]}"
    verdict = "ok" if median < TARGET_S and not errors else "OVER TARGET" if not errors else "ERROR"
    return [Row("start-up: window shown (fresh process)", median, statistics.median(bare),
                f"{verdict}: target < {TARGET_S} s; {listed}; raw = bare QMainWindow")]


if __name__ == "__main__":
    for row in rows():
        print(row)
