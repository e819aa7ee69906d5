"""Copy as Python with inputs no script can hold (a shared workspace's "abc" top k): one message,
nothing on the clipboard, no traceback (issue 17 item 1)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QGuiApplication

from bertstudio.ui import menus


@pytest.mark.parametrize("window_tabs", [()], ids=["fill-mask tab only"])
def test_a_bad_count_is_a_message_not_a_crash(qtbot, window, monkeypatch) -> None:  # noqa: ANN001
    tab = window.task_tabs["fill-mask"]
    window.tabs.setCurrentWidget(tab)
    monkeypatch.setattr(tab, "last_run", lambda: ("some/model", {"text": "a [MASK]", "top_k": "abc"}))
    reported: list[Any] = []
    monkeypatch.setattr(window, "report_error", lambda error, *where: reported.append(error))
    QGuiApplication.clipboard().setText("before")

    assert menus.copy_as_python(window) == ""
    assert len(reported) == 1 and "whole number" in reported[0].message
    assert QGuiApplication.clipboard().text() == "before"


def test_the_action_follows_the_current_tabs_spec(qtbot, window) -> None:  # noqa: ANN001
    """Copy as Python is offered exactly where the current tab's spec has a script (issue 18)."""
    action = window.menus.copy_action
    without = [tab for tab in window.task_tabs.values() if menus.script_spec(tab) is None]
    assert without, "the Train, Explain and Evaluate tabs have no script"
    for tab in window.task_tabs.values():
        window.tabs.setCurrentWidget(tab)
        spec = getattr(tab, "spec", None)
        assert action.isEnabled() == (spec is not None and spec.script is not None), tab.TITLE
