"""Run, Cancel and progress exist once (ui/tabs/run_lifecycle.py): the template task tab, Explain and
Evaluate behave the same while a job runs, when Esc stops it and after it ended."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt

from bertstudio.core.progress import TaskControl
from bertstudio.ui.tabs.evaluate_tab import EvaluateTab
from bertstudio.ui.tabs.explain_tab import ExplainTab
from bertstudio.ui.tabs.run_lifecycle import RunLifecycle
from tests.ui.conftest import only_tabs, tab_of

window_tabs = only_tabs("explain_tab", "evaluate_tab")  # with the first tab, Fill-mask: the three compared here


def _until_cancelled(control: TaskControl) -> None:
    """A job that reports progress and stops only when asked (at most 30 s)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        control.report("working", 0.5)
        control.check()
        time.sleep(0.01)


def _esc(qtbot, window, tab, inside) -> None:  # noqa: ANN001
    """Esc as a person presses it: the window active, the focus inside the tab."""
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    inside.setFocus()
    focused = window.focusWidget()
    assert focused is not None and tab.isAncestorOf(focused)
    qtbot.keyClick(focused, Qt.Key.Key_Escape)


def _tabs(window):  # noqa: ANN001, ANN202
    return {"fill-mask": window.task_tabs["fill-mask"], "explain": tab_of(window, ExplainTab),
            "evaluate": tab_of(window, EvaluateTab)}


@pytest.mark.parametrize("name", ["fill-mask", "explain", "evaluate"])
def test_running_then_esc_cancels_the_same_way_everywhere(qtbot, window, name: str) -> None:  # noqa: ANN001
    tab = _tabs(window)[name]
    window.tabs.setCurrentWidget(tab)
    assert isinstance(tab.lifecycle, RunLifecycle)
    with qtbot.waitSignal(tab.runner.started, timeout=5_000):
        tab.runner.start(_until_cancelled)
    assert not tab.run_button.isEnabled() and tab.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: "working" in tab.lifecycle.progress.label.text(), timeout=5_000)
    with qtbot.waitSignal(tab.runner.finished, timeout=5_000):
        _esc(qtbot, window, tab, tab.cancel_button)  # enabled while a job runs; Esc is a shortcut, not its click
    assert tab.run_button.isEnabled() and not tab.cancel_button.isEnabled()
    assert "Cancelled." in tab.notes.text()


def test_evaluate_esc_also_stops_its_row_tools(qtbot, window) -> None:  # noqa: ANN001
    tab = tab_of(window, EvaluateTab)
    window.tabs.setCurrentWidget(tab)
    with qtbot.waitSignal(tab.projector_runner.started, timeout=5_000):
        tab.projector_runner.start(_until_cancelled)
    with qtbot.waitSignal(tab.projector_runner.finished, timeout=5_000):
        _esc(qtbot, window, tab, tab.run_button)
    assert not tab.projector_runner.busy
