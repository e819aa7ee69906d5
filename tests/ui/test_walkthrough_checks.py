"""scripts/walkthrough.py's checks find what a person would see: a window wider than the screen,
a clipped button, a dialog, a crash log (each planted here, each must be reported)."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QPushButton

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import walkthrough  # noqa: E402


def test_a_clean_window_has_no_problems(window, tmp_path: Path) -> None:
    inspector = walkthrough.Inspector(window, tmp_path / "crashes")
    inspector.check()
    assert inspector.problems == []


def test_planted_problems_are_all_reported(qtbot, window, tmp_path: Path) -> None:
    inspector = walkthrough.Inspector(window, tmp_path / "crashes")
    tab = window.task_tabs["fill-mask"]
    window.tabs.setCurrentWidget(tab)
    window.resize(1327, 780)  # what a long status line once did
    qtbot.wait(1)
    inspector.check()
    assert any("px wide" in p for p in inspector.problems), inspector.problems
    window.resize(1180, 780)
    button = QPushButton("Details of the last error…", tab.run_button.parentWidget())
    button.setGeometry(tab.run_button.parentWidget().width() - 30, 0, 200, 30)  # mostly past its parent's edge
    button.show()
    (tmp_path / "crashes").mkdir()
    (tmp_path / "crashes" / "crash-1.log").write_text("Traceback", encoding="utf-8")
    box = QMessageBox(QMessageBox.Icon.Critical, "Internal error", "Something broke", parent=window)
    box.show()
    qtbot.wait(1)
    inspector.check()
    found = "\n".join(inspector.problems)
    assert "'Details of the last error…' is clipped" in found or "lies outside the window" in found, found
    assert "a dialog popped up: 'Internal error'" in found and not box.isVisible()
    assert "crash log" in found
