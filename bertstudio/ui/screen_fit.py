"""Every window fits the screen it opens on: one rule for the main window and every dialog.

A dialog once asked for 1134x720 (Trace why: at 900x600 its colour bar, last column and Copy as
Python were off-screen), and a main window saved at 1280x800 came back 1180x780 on a 900x600
screen with its tabs, Log and status bar out of reach. So:

- `clamp(window)` shrinks a window to the available geometry of its screen and moves it inside;
- one application event filter clamps every top-level window (dialogs, message boxes, the main
  window) each time it is shown, so no dialog needs to remember;
- `scroll_body(dialog)` gives a dialog a scrolling body: whatever its contents ask for, the dialog
  itself can always be made as small as the screen, and its contents scroll.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFrame, QScrollArea, QVBoxLayout, QWidget

from bertstudio.ui.app_filter import install_once


def available_geometry(window: QWidget) -> QRect | None:
    """The usable area (without panels and docks) of the screen `window` opens on: its own screen,
    else its parent's, else the primary one."""
    parent = window.parentWidget()
    screen = window.screen() or (parent.screen() if parent is not None else None) or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else None


def clamp(window: QWidget, area: QRect | None = None) -> None:
    """Shrink `window` (frame included) to `area`, its screen's available geometry by default, and
    move it inside. A maximized or full-screen window is the screen's already."""
    area = area if area is not None else available_geometry(window)
    if area is None or area.isEmpty() or window.windowState() & (Qt.WindowState.WindowMaximized
                                                                  | Qt.WindowState.WindowFullScreen):
        return
    frame = window.frameGeometry()
    extra = QSize(frame.width() - window.width(), frame.height() - window.height())  # title bar, borders
    width = max(1, min(window.width(), area.width() - extra.width()))
    height = max(1, min(window.height(), area.height() - extra.height()))
    if (width, height) != (window.width(), window.height()):
        window.resize(width, height)
    frame = window.frameGeometry()
    left = min(max(frame.left(), area.left()), area.right() + 1 - frame.width())
    top = min(max(frame.top(), area.top()), area.bottom() + 1 - frame.height())
    if (left, top) != (frame.left(), frame.top()):
        window.move(max(left, area.left()), max(top, area.top()))


class PageLayout(QVBoxLayout):
    """The layout of a scrolling page (a tab's, a dialog's body) that never asks for its preferred
    height: given a wrapped label (a note, a refusal, a title), a scroll area sizes its page to the
    page's whole preferred height, and the Train page grew from 956 to 2136 px on a refused search
    (the plots stretched to the form's full height, Start and the search controls below the fold).
    Without height-for-width the page is the viewport's height, or its least height when that is
    more: a state change never re-lays it out."""

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        return False


def keep_room(widget: QWidget) -> QWidget:
    """`widget` keeps its room while hidden: a one-line note that comes and goes beside a control
    never moves what is around it (the Train page's plots shrank by a line on a refusal)."""
    policy = widget.sizePolicy()
    policy.setRetainSizeWhenHidden(True)
    widget.setSizePolicy(policy)
    return widget


def scroll_body(dialog: QWidget) -> QWidget:
    """A body for `dialog`'s contents inside a frameless scroll area filling it: lay the contents out
    with `PageLayout(body)`. The scroll bars show only when the screen is smaller than the contents."""
    area = QScrollArea(dialog)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    body = QWidget()
    area.setWidget(body)
    outer = QVBoxLayout(dialog)
    outer.setContentsMargins(0, 0, 0, 0)
    outer.addWidget(area)
    return body


def _is_fitted(obj: QObject) -> bool:
    """A top-level window a person moves (not a popup, menu or tool tip)."""
    if not isinstance(obj, QWidget) or not obj.isWindow():
        return False
    return obj.windowType() in (Qt.WindowType.Window, Qt.WindowType.Dialog, Qt.WindowType.Sheet)


class ScreenFit(QObject):
    """Application event filter: clamps every top-level window when it is shown."""

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Show and _is_fitted(obj):
            assert isinstance(obj, QWidget)
            clamp(obj)
        return False


def install() -> ScreenFit:
    """Idempotent; call on the GUI thread once the QApplication exists."""
    return install_once(ScreenFit)[0]
