"""The Explain tab's target: the output to explain. By default the model's own answer (or the one a
task tab handed over); a result offers the targets a person may pick, and any may be typed."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QWidget

DEFAULT_TARGET = "(the model's answer)"


class TargetPicker(QComboBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setEditable(True)
        self.setMinimumWidth(220)
        self.setToolTip("The output to explain: a candidate, label, entity token, answer start/end, choice")

    def _picked(self, text: str) -> bool:
        """An offered target is chosen (`text`, the box's, is not typed over)."""
        return self.currentIndex() > 0 and text == self.itemText(self.currentIndex())

    def fill(self, targets: tuple[tuple[str, str], ...], keep: bool = True) -> None:
        """The targets a result offers; the one chosen or typed stays (the next Explain runs it too,
        and the result stays current) unless `keep` is False (another task, a hand-off)."""
        typed = self.currentText().strip()
        chosen = self.currentData() if self._picked(typed) else (typed if typed != DEFAULT_TARGET else "")
        chosen = chosen if keep else ""
        self.clear()
        self.addItem(DEFAULT_TARGET, None)
        for value, label in targets:
            self.addItem(label, value)
        if chosen and self.findData(chosen) > 0:
            self.setCurrentIndex(self.findData(chosen))
        elif chosen:
            self.setEditText(chosen)

    def chosen(self, default: str | None) -> str | None:
        """The target picked or typed; `default` when none is."""
        if self._picked(self.currentText()):
            return str(self.currentData())
        text = self.currentText().strip()
        return default if not text or text == DEFAULT_TARGET else text
