"""The input widgets whose changes may make a task tab's result out of date (what a result belongs
to, RunState, lives in ui/tabs/tab_state.py with the rest of the tab's state).
The template tab marks a stale result with these, the same for every task."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QTabWidget,
    QTextEdit,
    QWidget,
)

from bertstudio.ui.tabs.tab_state import INVALID, RunState, changed

__all__ = ["INVALID", "RunState", "changed", "watch_inputs"]


def watch_inputs(top: QWidget, callback: Callable[..., None], skip: Iterable[QWidget] = ()) -> None:
    """Call `callback` whenever an input widget under `top` changes (text, choice, number, tick).
    Generic, so a view's new widget is watched without the view doing anything."""
    skipped = set(skip)
    for widget in top.findChildren(QWidget):
        if widget in skipped:
            continue
        if isinstance(widget, QLineEdit | QPlainTextEdit | QTextEdit):
            if not isinstance(widget.parent(), QComboBox | QSpinBox | QDoubleSpinBox):  # their own signals
                widget.textChanged.connect(callback)
        elif isinstance(widget, QComboBox):
            widget.currentTextChanged.connect(callback)
        elif isinstance(widget, QSpinBox | QDoubleSpinBox):
            widget.valueChanged.connect(callback)
        elif isinstance(widget, QAbstractButton) and widget.isCheckable():
            widget.toggled.connect(callback)
        elif isinstance(widget, QTabWidget):  # a mode page (Classification's Text / Batch) is an input too
            widget.currentChanged.connect(callback)
