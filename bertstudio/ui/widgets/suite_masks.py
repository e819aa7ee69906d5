"""The Tests tab's `{mask}` row: the masked LM that fills `{mask}`, "Suggest words", and its words
listed with a tick each (unticked words are left out of the tests)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem, QPushButton, QWidget


class SuiteMasks(QWidget):
    suggest = Signal()  # "Suggest words" pressed
    changed = Signal()  # a word ticked or unticked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.words: dict[str, list[str]] = {}  # test -> the masked LM's suggested words
        self.source = QLineEdit()
        self.source.setPlaceholderText("masked LM that fills {mask} (default: the Fill-mask tab's model)")
        self.suggest_button = QPushButton("Suggest words")
        self.suggest_button.clicked.connect(self.suggest)
        self.list = QListWidget()
        self.list.setMaximumHeight(110)
        self.list.setToolTip("The masked LM's words for {mask}; untick those the tests should not use")
        self.list.itemChanged.connect(lambda _item: self.changed.emit())
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (QLabel("{mask}:"), self.source, self.suggest_button, self.list):
            layout.addWidget(widget, 1 if widget in (self.source, self.list) else 0)

    def clear(self) -> None:
        self.words = {}
        self.list.clear()

    def show_words(self, words: dict[str, list[str]]) -> None:
        """Every test's words, ticked."""
        self.words = words
        self.list.blockSignals(True)
        self.list.clear()
        for name, found in words.items():
            for word in found:
                item = QListWidgetItem(f"{name}: {word}")
                item.setData(Qt.ItemDataRole.UserRole, (name, word))
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked)
                self.list.addItem(item)
        self.list.blockSignals(False)

    def ticked(self) -> dict[str, list[str]]:
        """Test -> the words still ticked."""
        out: dict[str, list[str]] = {name: [] for name in self.words}
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.checkState() == Qt.CheckState.Checked:
                name, word = item.data(Qt.ItemDataRole.UserRole)
                out[name].append(word)
        return out
