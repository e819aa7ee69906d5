"""One application-wide event filter of each kind, installed once (ui/screen_fit, ui/wheel_guard)."""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QApplication

Filter = TypeVar("Filter", bound=QObject)
_installed: dict[type, QObject] = {}


def install_once(kind: type[Filter]) -> tuple[Filter, bool]:
    """The application's `kind` filter and whether this call made it (the first one does); call on
    the GUI thread once the QApplication exists."""
    made = kind not in _installed
    if made:
        app = QApplication.instance()
        if app is None:
            raise RuntimeError(f"installing the {kind.__name__} filter needs a QApplication")
        _installed[kind] = kind(app)
        app.installEventFilter(_installed[kind])
    found = _installed[kind]
    assert isinstance(found, kind)
    return found, made
