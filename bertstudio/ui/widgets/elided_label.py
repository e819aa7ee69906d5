"""A one-line label whose text never widens the window: it is elided to the room it gets, and the
whole text is in the tooltip.

A plain QLabel asks its layout for the width of its whole text, so one long status line (a
training plan, Explain's progress) once pushed the window past a 1280-pixel screen and cut off
the buttons beside it. Use this for every status, progress or plan line.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

MIN_CHARS = 8  # the width it asks for at least, in average characters ("Cancellin…")
HINT_CHARS = 40  # the width it would like, whatever its text


class ElidedLabel(QLabel):
    """`setText(text)` keeps the whole text (`text()`, tooltip); what is drawn is elided to fit.

    Plain text only: a status line has no markup, and eliding rich text would cut tags."""

    def __init__(self, text: str = "", parent: QWidget | None = None,
                 mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight) -> None:
        super().__init__(parent)
        self._full = ""
        self._mode = mode
        self._own_tooltip = ""  # a tooltip set by the caller wins over the whole-text one
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._full = str(text)
        self._sync()

    def text(self) -> str:
        """The whole text, not the elided one drawn."""
        return self._full

    def setToolTip(self, tip: str) -> None:  # noqa: N802 (Qt's name)
        self._own_tooltip = tip
        super().setToolTip(tip)

    def shown_text(self) -> str:
        """What is drawn now (for tests)."""
        return self.fontMetrics().elidedText(self._full, self._mode, max(0, self.contentsRect().width()))

    def is_elided(self) -> bool:
        return self.shown_text() != self._full

    def _sync(self) -> None:
        super().setText(self._full)  # accessibility and QLabel's own state keep the whole text
        if not self._own_tooltip:
            QLabel.setToolTip(self, self._full if self.is_elided() else "")
        self.update()

    def _frame(self) -> QSize:
        """The room that margins, padding and the frame take around the text."""
        margins, frame = self.contentsMargins(), 2 * self.frameWidth()
        return QSize(margins.left() + margins.right() + frame, margins.top() + margins.bottom() + frame)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        metrics = self.fontMetrics()
        return QSize(metrics.averageCharWidth() * MIN_CHARS, metrics.height()) + self._frame()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        metrics = self.fontMetrics()
        width = min(metrics.horizontalAdvance(self._full), metrics.averageCharWidth() * HINT_CHARS)
        return QSize(width, metrics.height()) + self._frame()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._sync()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        painter = QPainter(self)
        self.drawFrame(painter)  # a style sheet's border, as QLabel draws it
        self.style().drawItemText(painter, self.contentsRect(), int(self.alignment() | Qt.AlignmentFlag.AlignVCenter),
                                  self.palette(), self.isEnabled(), self.shown_text(), self.foregroundRole())
        painter.end()
