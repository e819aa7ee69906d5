"""A bug in the window (an exception in a slot): one line on stderr, the traceback in a crash log,
the error in the log panel; the window keeps working."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from bertstudio.app import exit_now, install_excepthook
from bertstudio.ui.main_window import MainWindow
app = QApplication([])
window = MainWindow(confirm_close=False)
install_excepthook(window)
def broken():
    raise ZeroDivisionError("a slot with a bug")
def check():
    print("LOG", "internal error (ZeroDivisionError): a slot with a bug" in window.log.text(), flush=True)
    print("DETAILS", "Traceback" in window.log.last_details, flush=True)
    window.close()
QTimer.singleShot(0, broken)
QTimer.singleShot(200, check)
window.show()
exit_now(app.exec(), window.settings)  # as run_app ends
"""


def test_a_bug_in_a_slot_is_one_line_a_crash_log_and_a_log_entry(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert "LOG True" in done.stdout and "DETAILS True" in done.stdout, done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip() and "propagateSizeHints" not in line]
    assert lines and lines[0].startswith("internal error: ZeroDivisionError: a slot with a bug"), done.stderr
    assert len(lines) == 1, done.stderr
    logs = list((tmp_path / "state" / "bertstudio" / "crashes").glob("crash-*.log"))
    assert len(logs) == 1 and "in broken" in logs[0].read_text()
