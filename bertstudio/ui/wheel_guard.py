"""The mouse wheel scrolls the page; it changes a setting only in the field being edited.

Qt gives spin boxes, combo boxes and sliders the wheel (and focus) whenever the pointer is over
them, so scrolling down the Train form once rewrote Weight decay (0.01 -> 0) mid-run. One
application event filter, installed before the first tab is built, fixes it everywhere:

- every such field gets `Qt.StrongFocus` when it is polished (a wheel no longer gives focus);
- a wheel over one that does not have focus is ignored by it and goes on to its parent, so
  the scroll area around it scrolls instead.

Scroll bars keep the wheel (scrolling is what they are for).

Focus alone was not enough (issue 40: the wheel over the Train form's Precision combo turned it to
bf16): a click on a combo box or slider to pick a value leaves it focused, and the next scroll of
the page over it rewrote the value. So a field takes the wheel only while it is being edited: it
got focus by the keyboard (Tab, a shortcut), or, for a spin box, by a click into its text. Picking
from a combo's list or dragging a slider does not arm it.

Plots (pyqtgraph's views are QGraphicsViews) zoom with the wheel only with Ctrl held; otherwise the
wheel scrolls the page around them.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QFocusEvent, QWheelEvent
from PySide6.QtWidgets import (
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QGraphicsView,
    QScrollBar,
    QWidget,
)

from bertstudio.ui.app_filter import install_once

GUARDED = (QAbstractSpinBox, QComboBox, QAbstractSlider)


def _guarded(obj: QObject) -> QWidget | None:
    """The value field a wheel over `obj` would change, or None (a scroll bar is no field)."""
    if isinstance(obj, QScrollBar) or not isinstance(obj, GUARDED):
        return None
    return obj


ARMING = (Qt.FocusReason.TabFocusReason, Qt.FocusReason.BacktabFocusReason, Qt.FocusReason.ShortcutFocusReason,
          Qt.FocusReason.OtherFocusReason)
KEEPING = (Qt.FocusReason.PopupFocusReason, Qt.FocusReason.ActiveWindowFocusReason)
ZOOM_MODIFIER = Qt.KeyboardModifier.ControlModifier


def _focused(widget: QWidget) -> bool:
    focus = QApplication.focusWidget()
    return focus is not None and (focus is widget or widget.isAncestorOf(focus))


def _arms(widget: QWidget, reason: Qt.FocusReason) -> bool:
    """Whether focus given for `reason` means the person is editing `widget` (see the docstring)."""
    if reason in ARMING:
        return True
    return reason == Qt.FocusReason.MouseFocusReason and isinstance(widget, QAbstractSpinBox)


def _plot_view(obj: QObject) -> QGraphicsView | None:
    """The plot `obj` is, or whose viewport it is (a wheel over a plot arrives at its viewport and
    goes on to the view itself, which hands it to the scene: both pass it on), or None."""
    if isinstance(obj, QGraphicsView):
        return obj
    parent = obj.parent() if isinstance(obj, QWidget) else None
    return parent if isinstance(parent, QGraphicsView) and parent.viewport() is obj else None


def strong_focus(widget: QWidget) -> None:
    """Focus by click or Tab only (the default WheelFocus lets a passing wheel take focus)."""
    if widget.focusPolicy() == Qt.FocusPolicy.WheelFocus:
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)


class WheelGuard(QObject):
    """Application event filter: see the module docstring."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._armed: QWidget | None = None  # the field being edited: the only one the wheel may change

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        kind = event.type()
        if kind == QEvent.Type.Wheel:
            assert isinstance(event, QWheelEvent)
            return self._wheel(obj, event)
        if kind == QEvent.Type.FocusIn:
            widget = _guarded(obj)
            if widget is not None:
                assert isinstance(event, QFocusEvent)
                if event.reason() not in KEEPING:  # back from a popup or another window: as it was
                    self._armed = widget if _arms(widget, event.reason()) else None
        elif kind == QEvent.Type.Polish:
            widget = _guarded(obj)
            if widget is not None:
                strong_focus(widget)
        return False

    def editing(self, widget: QWidget) -> bool:
        """Whether the wheel may change `widget` now: focused, and focused to be edited."""
        return self._armed is widget and _focused(widget)

    def _wheel(self, obj: QObject, event: QWheelEvent) -> bool:
        widget = _guarded(obj)
        plot = _plot_view(obj)
        passing = (widget is not None and not self.editing(widget)) or (
            plot is not None and not event.modifiers() & ZOOM_MODIFIER)
        if passing:
            event.ignore()  # not accepted: Qt offers the wheel to the parent (the scroll area)
            return True  # and the field or plot never sees it
        return False


def install() -> WheelGuard:
    """Idempotent; call on the GUI thread once the QApplication exists, before widgets are shown."""
    guard, made = install_once(WheelGuard)
    if made:
        for widget in QApplication.allWidgets():  # fields that exist already
            if _guarded(widget) is not None:
                strong_focus(widget)
    return guard
