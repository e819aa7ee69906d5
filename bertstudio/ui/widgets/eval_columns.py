"""Evaluate's Columns row: which column of the file holds each field the task reads (text, label,
question...) and, for multiple choice, the choices. The row is always in the form: its choices
change with the file and the task, its place does not, so typing a path moves nothing below it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QWidget

DETECTED = "(detected)"


def _column_combo() -> QComboBox:
    """A Columns choice sized to a few characters, not to the longest header name: long names made
    the page scroll sideways at 900x600 (the list shows them whole, the tooltip the chosen one)."""
    combo = QComboBox()
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(len(DETECTED))
    combo.addItem(DETECTED, None)
    return combo


class ColumnsRow(QWidget):
    """A choice of column per field of the task (detected by default), and the choice columns."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combos: dict[str, QComboBox] = {}
        self.choices = QLineEdit()
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.setMinimumHeight(max(_column_combo().sizeHint().height(), self.choices.sizeHint().height()))

    def show_columns(self, header: Sequence[str], roles: Sequence[tuple[str, str]], choices: bool) -> None:
        """One choice of `header` per (field, label) of `roles`; the choice columns where `choices`."""
        while self.row.count():
            item = self.row.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()  # gone at once, not when the event loop deletes it (a ghost label)
                widget.deleteLater()
        self.combos = {}
        self.choices = QLineEdit()
        self.choices.setPlaceholderText("choice0, choice1… (detected)")
        if not roles or not header:
            note = QLabel("none to choose for this task" if not roles else "detected when a file is chosen")
            note.setEnabled(False)
            self.row.addWidget(note)
            self.row.addStretch(1)
            return
        for field, label in roles:
            combo = _column_combo()
            for name in header:
                combo.addItem(name, name)
            combo.currentTextChanged.connect(combo.setToolTip)
            self.combos[field] = combo
            self.row.addWidget(QLabel(f"{label}:"))
            self.row.addWidget(combo, 1)
        if choices:
            self.row.addWidget(QLabel("Choices:"))
            self.row.addWidget(self.choices, 1)
        self.row.addStretch(1)

    def columns(self) -> Any:
        """The core's EvalColumns: the chosen columns, None where left to detection."""
        from bertstudio.core.evaluate.readers import EvalColumns

        chosen = {field: combo.currentData() for field, combo in self.combos.items()}
        return EvalColumns(**chosen, choices=tuple(c.strip() for c in self.choices.text().split(",") if c.strip()))
