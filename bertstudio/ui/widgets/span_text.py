"""Read-only text with coloured character spans and a legend: NER entities, QA answers.

Spans are Python character offsets (what tokenizers' offset mappings give); Qt counts UTF-16
code units, so offsets are converted before formatting, and emoji or other non-BMP
characters do not shift the highlights. Colours are fixed per kind in the order kinds are
declared (`set_kinds`), so PER keeps its colour from one run to the next.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from bertstudio.ui.theme import ink_on

# Light backgrounds that keep black text readable, distinct for the common entity types.
PALETTE = ("#ffd97a", "#9fd8ff", "#b8f0a8", "#ffb3c7", "#d9c2ff", "#ffc99a", "#a8efe6", "#e6e6a0",
           "#f0b8f0", "#c7d1dc")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str
    tooltip: str = ""


def utf16_offsets(text: str) -> list[int]:
    """Position in Qt's document (UTF-16 units) of every Python character offset 0..len(text)."""
    positions, unit = [0], 0
    for char in text:
        unit += 2 if ord(char) > 0xFFFF else 1
        positions.append(unit)
    return positions


class SpanText(QWidget):
    """`set_spans(text, spans)`; `select(start, end)` selects a span as if the user dragged over it."""

    span_hovered = Signal(object)  # Span under the mouse, or None

    def __init__(self, parent: QWidget | None = None, legend: bool = True, colours_of: SpanText | None = None) -> None:
        """`colours_of`: another SpanText whose kind colours this one shares (a type the same colour in both)."""
        super().__init__(parent)
        self.view = QPlainTextEdit()
        self.view.setReadOnly(True)
        font = self.view.font()  # a font, not a style sheet: a styled editor kept a white base in the dark theme
        font.setPixelSize(15)
        self.view.setFont(font)
        self.view.setMouseTracking(True)
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.setVisible(legend)
        self.text = ""
        self.spans: tuple[Span, ...] = ()
        self.kinds: list[str] = colours_of.kinds if colours_of is not None else []  # in colour order
        self._units: list[int] = [0]
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.legend)

    # -- colours ---------------------------------------------------------------------------
    def set_kinds(self, kinds: Sequence[str]) -> None:
        """Declare kinds in a stable order (e.g. the model's labels) so colours do not move."""
        for kind in kinds:
            if kind not in self.kinds:
                self.kinds.append(kind)

    def colour(self, kind: str) -> str:
        if kind not in self.kinds:
            self.kinds.append(kind)
        return PALETTE[self.kinds.index(kind) % len(PALETTE)]

    # -- content ---------------------------------------------------------------------------
    def set_spans(self, text: str, spans: Sequence[Span]) -> None:
        self.text = text
        self.spans = tuple(s for s in spans if 0 <= s.start < s.end <= len(text))
        self._units = utf16_offsets(text)
        self.view.setPlainText(text)
        cursor = QTextCursor(self.view.document())
        for span in self.spans:
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(self.colour(span.kind)))
            fmt.setForeground(QColor(ink_on(self.colour(span.kind))))  # dark text on a pastel, in both themes
            fmt.setToolTip(span.tooltip or span.kind)
            fmt.setProperty(QTextCharFormat.Property.UserProperty, span.kind)
            cursor.setPosition(self._units[span.start])
            cursor.setPosition(self._units[span.end], QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(fmt)
        self._update_legend()

    def clear(self) -> None:
        self.set_spans("", ())

    def _update_legend(self) -> None:
        kinds = list(dict.fromkeys(s.kind for s in self.spans))
        if not kinds:
            self.legend.setText("<i>nothing highlighted</i>" if self.text else "")
            return
        items = [
            f"<span style='background:{self.colour(k)}; color:#000;'>&nbsp;{html.escape(k)}&nbsp;</span>"
            for k in kinds
        ]
        self.legend.setText("&nbsp;&nbsp;".join(items))

    def kind_at(self, offset: int) -> str | None:
        """The kind highlighted at a Python character offset, read back from the document (for tests)."""
        cursor = QTextCursor(self.view.document())
        cursor.setPosition(self._units[offset] + 1)  # the format of the character before the cursor
        value = cursor.charFormat().property(QTextCharFormat.Property.UserProperty)
        return str(value) if value else None

    def background_at(self, offset: int) -> str | None:
        cursor = QTextCursor(self.view.document())
        cursor.setPosition(self._units[offset] + 1)
        brush = cursor.charFormat().background()
        return brush.color().name() if brush.style() != brush.style().NoBrush else None

    # -- selection -------------------------------------------------------------------------
    def select(self, start: int, end: int) -> None:
        """Select characters start..end (Python offsets) and scroll them into view."""
        if not (0 <= start <= end <= len(self.text)):
            return
        cursor = QTextCursor(self.view.document())
        cursor.setPosition(self._units[start])
        cursor.setPosition(self._units[end], QTextCursor.MoveMode.KeepAnchor)
        self.view.setTextCursor(cursor)
        self.view.ensureCursorVisible()
        self.view.setFocus()

    def selection(self) -> tuple[int, int]:
        """The selected range as Python character offsets."""
        cursor = self.view.textCursor()
        units = self._units
        return units.index(cursor.selectionStart()), units.index(cursor.selectionEnd())
