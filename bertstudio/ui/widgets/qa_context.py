"""The QA context: an editable text that highlights answer spans without changing the text.

Highlights are QTextEdit extra selections (character ranges), so the text a user pasted is
never rewritten; editing it drops highlights that would no longer point at the right words.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from bertstudio.ui import theme
from bertstudio.ui.theme import ink_on

BEST = QColor("#ffd54f")  # the answer being shown (dark text on it, in both themes)


class QAContextEdit(QPlainTextEdit):
    """`show_span(start, end, window=None)` highlights characters; `highlights` says what is shown."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.highlights: list[tuple[int, int]] = []
        self.window_span: tuple[int, int] | None = None
        self.textChanged.connect(self._drop_stale)
        self._setting = False

    def selection(self, start: int, end: int, colour: QColor, bold: bool) -> QTextEdit.ExtraSelection:
        """Characters [start, end) on `colour`, in the ink that reads on it."""
        selection = QTextEdit.ExtraSelection()
        cursor = QTextCursor(self.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        fmt = QTextCharFormat()
        fmt.setBackground(colour)
        fmt.setForeground(QColor(ink_on(colour.name())))  # never white on yellow in the dark theme
        if bold:
            fmt.setFontWeight(700)
        selection.cursor = cursor
        selection.format = fmt
        return selection

    def show_span(self, start: int, end: int, window: tuple[int, int] | None = None) -> None:
        """Highlight [start, end) (and faintly the window it came from), and scroll to it."""
        length = len(self.toPlainText())
        start, end = max(0, min(start, length)), max(0, min(end, length))
        selections = []
        self.window_span = window
        if window is not None:
            shade = QColor(theme.colors().window_background)
            selections.append(self.selection(max(0, window[0]), min(window[1], length), shade, False))
        self.highlights = [(start, end)] if end > start else []
        if end > start:
            selections.append(self.selection(start, end, BEST, True))
            cursor = QTextCursor(self.document())
            cursor.setPosition(start)
            self.setTextCursor(cursor)
            self.ensureCursorVisible()
        self.setExtraSelections(selections)

    def highlighted_text(self) -> list[str]:
        text = self.toPlainText()
        return [text[s:e] for s, e in self.highlights]

    def clear_highlights(self) -> None:
        self.highlights = []
        self.window_span = None
        self.setExtraSelections([])

    def _drop_stale(self) -> None:
        if self.highlights or self.window_span:
            self.clear_highlights()
