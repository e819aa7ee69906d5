"""The window must appear before torch/transformers are imported (they load in the background)."""

from __future__ import annotations

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
