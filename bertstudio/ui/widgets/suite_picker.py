"""The Tests tab's suite choice: a starter suite (resources/suites) or the path of a suite file, typed or
opened, over the line that describes the suite read (or says what it still needs)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFileDialog, QLabel, QPushButton, QVBoxLayout, QWidget

from bertstudio.ui.widgets.suite_fix import field_row


class SuitePicker(QWidget):
    changed = Signal()  # another suite chosen: picked, typed and confirmed, or opened

    def __init__(self, parent: QWidget | None = None) -> None:
        from bertstudio.core.suites.builtin import built_in_suites

        super().__init__(parent)
        self.combo = QComboBox()
        self.combo.setEditable(True)
        self.combo.setMinimumContentsLength(16)
        for name, path in built_in_suites().items():
            self.combo.addItem(f"{name} (starter)", str(path))
        self.combo.setToolTip("A starter suite, or the path of a suite file (JSON)")
        self.combo.currentIndexChanged.connect(self.changed)
        edit = self.combo.lineEdit()
        assert edit is not None  # an editable combo has its line edit
        edit.editingFinished.connect(self.changed)
        browse = QPushButton("Open…")
        browse.clicked.connect(self._browse)
        self.info = QLabel("")
        self.info.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(field_row("Suite:", self.combo, browse))
        layout.addWidget(self.info)

    def path(self) -> str:
        """A starter suite's file, else the typed path."""
        index = self.combo.currentIndex()
        data = self.combo.itemData(index) if index >= 0 else None
        if data and self.combo.itemText(index) == self.combo.currentText():
            return str(data)
        return self.combo.currentText().strip()

    def set_path(self, path: str) -> None:
        index = self.combo.findData(path)
        if index >= 0:
            self.combo.setCurrentIndex(index)
        else:
            self.combo.setEditText(path)
        self.changed.emit()

    def describe(self, suite: Any) -> None:
        """The suite's name, task, tests by kind and cases."""
        kinds = ", ".join(f"{sum(t.type == k for t in suite.tests)} {k}" for k in ("MFT", "INV", "DIR")
                          if any(t.type == k for t in suite.tests))
        self.info.setText(f"{suite.name}: {suite.task}, {len(suite.tests)} tests ({kinds}), {suite.cases:,} cases")

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a test suite", "", "Suites (*.json *.yaml *.yml);;All (*)")
        if path:
            self.set_path(path)
