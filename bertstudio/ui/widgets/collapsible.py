"""A panel that starts collapsed under a checkable header button (the Train page's search, learning-rate
finder, cross-validation and labelling panels): the page stays short until the user opens one."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLayout, QToolButton, QVBoxLayout, QWidget


def collapsible(title: str, tip: str = "") -> tuple[QToolButton, QWidget]:
    """(the header button, the body it shows and hides), collapsed."""
    toggle = QToolButton()
    toggle.setText(title)
    toggle.setCheckable(True)
    if tip:
        toggle.setToolTip(tip)
    body = QWidget()
    toggle.toggled.connect(body.setVisible)
    body.setVisible(False)
    return toggle, body


def stack(panel: QWidget, toggle: QToolButton, body: QWidget, *parts: QWidget | QLayout) -> None:
    """Lay `panel` out as its header over its body, the body holding `parts` top to bottom."""
    inner = QVBoxLayout(body)
    inner.setContentsMargins(0, 0, 0, 0)
    for part in parts:
        if isinstance(part, QLayout):
            inner.addLayout(part)
        else:
            inner.addWidget(part)
    outer = QVBoxLayout(panel)
    outer.setContentsMargins(0, 0, 0, 0)
    outer.addWidget(toggle)
    outer.addWidget(body)


def say_failures(panel: Any, cancelled: str = "") -> None:
    """The panel's worker error as a refusal beside its buttons (and in the Log), and its Cancel said;
    through `panel.show_message` as it is when they come."""
    panel.runner.error.connect(lambda error: panel.show_message(getattr(error, "message", str(error)), error=True))
    if cancelled:
        panel.runner.cancelled.connect(lambda: panel.show_message(cancelled))
