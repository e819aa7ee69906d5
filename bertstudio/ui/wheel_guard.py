"""The mouse wheel scrolls the page; it changes a setting only in the field being edited.

Qt gives spin boxes, combo boxes and sliders the wheel (and focus) whenever the pointer is over
them, so scrolling down the Train form once rewrote Weight decay (0.01 -> 0) mid-run. One
application event filter, installed before the first tab is built, fixes it everywhere:

- every such field gets `Qt.StrongFocus` when it is polished (a wheel no longer gives focus);
- a wheel over one that does not have focus is ignored by it and goes on to its parent, so
  the scroll area around it scrolls instead.

Scroll bars keep the wheel (scrolling is what they are for).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractSlider, QAbstractSpinBox, QApplication, QComboBox, QScrollBar, QWidget

GUARDED = (QAbstractSpinBox, QComboBox, QAbstractSlider)

_installed: dict[str, QObject] = {}


def _guarded(obj: QObject) -> QWidget | None:
    """The value field a wheel over `obj` would change, or None (a scroll bar is no field)."""
    if isinstance(obj, QScrollBar) or not isinstance(obj, GUARDED):
        return None
    return obj  # type: ignore[return-value]


def _focused(widget: QWidget) -> bool:
    focus = QApplication.focusWidget()
    return focus is not None and (focus is widget or widget.isAncestorOf(focus))


def strong_focus(widget: QWidget) -> None:
    """Focus by click or Tab only (the default WheelFocus lets a passing wheel take focus)."""
    if widget.focusPolicy() == Qt.FocusPolicy.WheelFocus:
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)


class WheelGuard(QObject):
    """Application event filter: see the module docstring."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        kind = event.type()
        if kind == QEvent.Type.Wheel:
            widget = _guarded(obj)
            if widget is not None and not _focused(widget):
                event.ignore()  # not accepted: Qt offers the wheel to the parent (the scroll area)
                return True  # and the field never sees it
        elif kind == QEvent.Type.Polish:
            widget = _guarded(obj)
            if widget is not None:
                strong_focus(widget)
        return False


def install() -> WheelGuard:
    """Idempotent; call on the GUI thread once the QApplication exists, before widgets are shown."""
    guard = _installed.get("guard")
    if guard is None:
        app = QApplication.instance()
        if app is None:
            raise RuntimeError("wheel_guard.install() needs a QApplication")
        guard = WheelGuard(app)
        app.installEventFilter(guard)
        _installed["guard"] = guard
        for widget in QApplication.allWidgets():  # fields that exist already
            if _guarded(widget) is not None:
                strong_focus(widget)
    assert isinstance(guard, WheelGuard)
    return guard
