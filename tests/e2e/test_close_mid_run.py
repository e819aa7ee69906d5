"""Closing the window while a model loads and predicts exits cleanly: code 0, no Qt thread warnings."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from bertstudio.ui.main_window import MainWindow
from bertstudio.workers.runner import configure_pool, shutdown
app = QApplication([])
configure_pool()
window = MainWindow(confirm_close=False)
tab = window.task_tabs["fill-mask"]
def go():
    tab.model_bar.load(sys.argv[1])
    tab.text.setPlainText("C C ( = [MASK] ) O")
    tab.model_bar.loaded.connect(lambda _i: (tab.run(), QTimer.singleShot(0, window.close)))
window.ready.connect(go)
window.show()
code = app.exec()
print("drained", shutdown(1000))
sys.exit(code)
"""


def test_close_while_running_exits_cleanly(real_models, tmp_path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1", "XDG_CONFIG_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(real_models["rxnmapper-albert-smiles-mlm"])],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert "drained True" in done.stdout
    assert "QThread" not in done.stderr and "Traceback" not in done.stderr, done.stderr
