"""What a task tab's shown result belongs to (model, input, heads off, compared model), and the
input widgets whose changes may make it out of date: the template tab marks a stale result with
this, the same for every task."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QTextEdit,
    QWidget,
)

from bertstudio.core.models import LoadRequest


class RunState(NamedTuple):
    """What a result belongs to: the model, the input, the heads off and the compared model."""

    model: LoadRequest | None
    inputs: Any
    heads: Any
    compare: str | None


INVALID = object()  # inputs that cannot run: never equal to what a result was computed from


def changed(shown: RunState, now: RunState) -> str:
    """What differs between the state a result was computed from and the state now ("" if nothing)."""
    for field, name in (("model", "model"), ("heads", "heads off"), ("compare", "model compared with"),
                        ("inputs", "input")):
        if getattr(shown, field) != getattr(now, field):
            return name
    return ""


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
