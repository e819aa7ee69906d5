"""One place per tab for everything a result or an error wants a person to know.

Notes arrive as `core.notes.Note` (level, text, detail): each text is shown once, coloured by
its level, and the details of all of them sit behind one "Details" toggle. An error replaces
the notes of the result it failed to produce, so a yellow warning and a red error about the
same cause are never on screen together.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QToolButton, QVBoxLayout, QWidget

from bertstudio.core.notes import Note, unique
from bertstudio.ui import theme


def colours(level: str) -> tuple[str, str]:
    """(text, background) of a note in the current theme: "Cancelled." must read on dark too."""
    c = theme.colors()
    return {"info": (c.info, "transparent"), "warning": (c.warning, c.warning_background),
            "error": (c.error, c.error_background)}[level]


class NotesArea(QWidget):
    """Shows a tuple of notes; `text()` is their plain text (for tests and the status bar)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.notes: tuple[Note, ...] = ()
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details_button = QToolButton()
        self.details_button.setText("Details")
        self.details_button.setCheckable(True)
        self.details_button.setToolTip("Show what lies behind these notes")
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setMaximumHeight(120)
        self.details_button.toggled.connect(self.details.setVisible)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.details)
        self.set_notes(())
        theme.manager().changed.connect(self._theme_changed)

    def _theme_changed(self, _scheme: str) -> None:
        self.set_notes(self.notes)  # the same notes, in the new theme's colours

    def set_notes(self, notes: Iterable[Note]) -> None:
        shown = unique(notes)
        if any(note.level == "error" for note in shown):
            shown = tuple(note for note in shown if note.level == "error")
        self.notes = shown
        self.label.setText("<br>".join(
            "<span style='color:{}; background:{}'>".format(*colours(n.level))
            + f"{'⚠ ' if n.level != 'info' else ''}{html.escape(n.text)}</span>"
            for n in shown
        ))
        detail = "\n\n".join(f"{n.text}\n{n.detail}" for n in shown if n.detail)
        self.details.setPlainText(detail)
        self.details_button.setVisible(bool(detail))
        self.details.setVisible(bool(detail) and self.details_button.isChecked())
        self.setVisible(bool(shown))

    def clear(self) -> None:
        self.set_notes(())

    def text(self) -> str:
        return "\n".join(note.text for note in self.notes)

    def levels(self) -> tuple[str, ...]:
        return tuple(note.level for note in self.notes)
