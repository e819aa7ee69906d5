"""The window must appear before torch/transformers are imported (they load in the background)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

CHECK = """
import sys
from PySide6.QtWidgets import QApplication
app = QApplication([])
from bertstudio.ui.main_window import MainWindow
from bertstudio.ui.tabs import tab_classes
classes = tab_classes()
heavy = sorted(m for m in ("torch", "transformers", "datasets", "accelerate") if m in sys.modules)
print("HEAVY", heavy, "TABS", len(classes))
"""


def test_ui_modules_do_not_import_torch() -> None:
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr
    assert "HEAVY [] " in done.stdout, done.stdout


def test_cli_help_does_not_import_torch() -> None:
    code = "import sys; from bertstudio.cli import build_parser; build_parser(); print(sorted(sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "'torch'" not in done.stdout and "'transformers'" not in done.stdout


SPECS = ("import sys, bertstudio.core.tasks.spec as s; s.all_specs(); "
         "print('numpy' in sys.modules, 'torch' in sys.modules)")


def test_reading_every_spec_imports_no_numpy() -> None:
    """The first tab reads its spec before the window shows; all_specs() imports every task module,
    and one numpy import there cost the first paint ~0.12 s (issue 19 walkthrough)."""
    done = subprocess.run([sys.executable, "-c", SPECS], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"], done.stdout


# A real window in a fresh process: what is imported when it is first shown, and whether the
# background import then fills the devices (the fill-mask tab's test uses this too).
SHOWN = """
import os, sys, tempfile
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
from bertstudio.ui.main_window import MainWindow
from bertstudio.ui.settings import AppSettings
folder = tempfile.mkdtemp()
store = QSettings(os.path.join(folder, "settings.ini"), QSettings.Format.IniFormat)
window = MainWindow(AppSettings(store, models_dir_override=folder), confirm_close=False)
heavy = ("numpy", "torch", "transformers", "pyqtgraph")
window.shown.connect(lambda: print("SHOWN", sorted(m for m in heavy if m in sys.modules), flush=True))
def ready():
    bar = window.task_tabs["fill-mask"].model_bar
    print("DEVICES", [bar.device.itemText(i) for i in range(bar.device.count())], flush=True)
    QTimer.singleShot(0, window.close)
window.ready.connect(ready)
if sys.argv[1:] == ["until-shown"]:  # only the SHOWN line is wanted: close before the background import
    window.shown.connect(lambda: QTimer.singleShot(0, window.close))
QTimer.singleShot(90_000, window.close)
window.show()
app.exec()
os._exit(0)
"""


@functools.cache
def window_in_fresh_process(prelude: str = "", until_shown: bool = False) -> str:
    """The SHOWN and DEVICES lines of a fresh window (`prelude` runs first: a test's proof that it can
    fail; `until_shown`: close once shown, no DEVICES line). Cached: the tests that read the plain
    window's lines (here and the Fill-mask tab's) read one fresh process, about 6 s each otherwise."""
    command = [sys.executable, "-c", prelude + SHOWN, *(["until-shown"] if until_shown else [])]
    done = subprocess.run(command, capture_output=True, text=True, timeout=150,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_window_shows_before_numpy_and_torch() -> None:
    out = window_in_fresh_process()
    assert "SHOWN []" in out, out
    assert "import torch\n" not in SHOWN
    assert "SHOWN ['numpy', 'torch']" in window_in_fresh_process("import torch\n", until_shown=True)
