"""A panel that starts collapsed under a checkable header button (the Train page's search, learning-rate
finder, cross-validation and labelling panels): the page stays short until the user opens one."""

from __future__ import annotations

from PySide6.QtWidgets import QToolButton, QWidget


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
