"""One place per tab for everything a result or an error wants a person to know.

Notes arrive as `core.notes.Note` (level, text, detail): each text is shown once, coloured by
its level, and the details of all of them sit behind one "Details" toggle. An error replaces
the notes of the result it failed to produce, so a yellow warning and a red error about the
same cause are never on screen together.

A task tab's notes are `one_line`: elided to one line (whole in the tooltip and behind Details),
so a note that comes or goes never moves the result below it.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QPlainTextEdit, QToolButton, QVBoxLayout, QWidget

from bertstudio.core.notes import Note, unique
from bertstudio.ui import theme
from bertstudio.ui.screen_fit import keep_room
from bertstudio.ui.widgets.elided_label import ElidedLabel

SEVERITY = ("info", "warning", "error")


def colours(level: str) -> tuple[str, str]:
    """(text, background) of a note in the current theme: "Cancelled." must read on dark too."""
    c = theme.colors()
    return {"info": (c.info, "transparent"), "warning": (c.warning, c.warning_background),
            "error": (c.error, c.error_background)}[level]


class NotesArea(QWidget):
    """Shows a tuple of notes; `text()` is their plain text (for tests and the status bar)."""

    def __init__(self, parent: QWidget | None = None, one_line: bool = False) -> None:
        super().__init__(parent)
        self.notes: tuple[Note, ...] = ()
        self.one_line = one_line
        self.label: QLabel = ElidedLabel() if one_line else QLabel()
        if not one_line:
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
        if self.one_line:
            self.label.setText("   ".join(f"{'⚠ ' if n.level != 'info' else ''}{n.text}" for n in shown))
            worst = max((n.level for n in shown), key=SEVERITY.index, default="info")
            self.label.setStyleSheet("QLabel {{ color: {}; background: {}; }}".format(*colours(worst)))
            # the whole of every note behind Details, as the line may be elided
            self.details.setPlainText("\n\n".join(f"{n.text}\n{n.detail}".strip() for n in shown))
        else:
            self.label.setText("<br>".join(
                "<span style='color:{}; background:{}'>".format(*colours(n.level))
                + f"{'⚠ ' if n.level != 'info' else ''}{html.escape(n.text)}</span>"
                for n in shown
            ))
            self.details.setPlainText("\n\n".join(f"{n.text}\n{n.detail}" for n in shown if n.detail))
        self._sync_details()
        self.setVisible(bool(shown))

    def _sync_details(self) -> None:
        """Details when there is more to read: a note's detail, or (one line) an elided line."""
        more = any(n.detail for n in self.notes) or (
            self.one_line and isinstance(self.label, ElidedLabel) and self.label.is_elided())
        self.details_button.setVisible(more)
        self.details.setVisible(more and self.details_button.isChecked())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if self.one_line:  # the layout has placed the label: is its line elided at this width?
            self._sync_details()

    def clear(self) -> None:
        self.set_notes(())

    def text(self) -> str:
        return "\n".join(note.text for note in self.notes)

    def levels(self) -> tuple[str, ...]:
        return tuple(note.level for note in self.notes)


def status_cell(progress: QWidget, notes: QWidget) -> QWidget:
    """The progress line and the notes share one cell of the controls' first row: a run clears the
    notes and shows its progress, its end hides the progress and shows its notes. Above the results
    (they once were) a note that came or went moved every result under the cursor."""
    cell = QWidget()
    grid = QGridLayout(cell)
    grid.setContentsMargins(0, 0, 0, 0)
    for widget in (progress, notes):  # keeping their room: the cell's height stays when both are hidden
        grid.addWidget(keep_room(widget), 0, 0, Qt.AlignmentFlag.AlignVCenter)
    return cell
