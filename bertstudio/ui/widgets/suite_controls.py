"""The Tests tab's controls above its results: the suite choice (a starter suite from resources/suites
or a suite file, typed or opened, over the line that describes it) and the "Fix it" rows (the user's
training data, to which a copy adds the failures; Fine-tune on failures, Label failures, Held-apart
cases only; the held-out file evaluated before and after the fix; the paragraph that reports a fix)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QFileDialog, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from bertstudio.ui.widgets.forms import browse_button, listed_or_typed
from bertstudio.ui.widgets.layouts import row

DATA_FILES = "Data (*.csv *.tsv *.jsonl *.json *.conll *.txt);;All (*)"


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
        browse = browse_button(self.set_path, "Open a test suite", "Suites (*.json *.yaml *.yml);;All (*)",
                               text="Open…")
        self.info = QLabel("")
        self.info.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row("Suite:", self.combo, browse, stretch=self.combo))
        layout.addWidget(self.info)

    def path(self) -> str:
        """A starter suite's file, else the typed path."""
        return listed_or_typed(self.combo)

    def set_path(self, path: str) -> None:
        """Show `path` and say `changed` once (a new index says it itself: the suite is read once)."""
        index = self.combo.findData(path)
        if 0 <= index != self.combo.currentIndex():
            self.combo.setCurrentIndex(index)
            return
        if index < 0:
            self.combo.setEditText(path)
        self.changed.emit()

    def describe(self, suite: Any) -> None:
        """The suite's name, task, tests by kind and cases."""
        kinds = ", ".join(f"{sum(t.type == k for t in suite.tests)} {k}" for k in ("MFT", "INV", "DIR")
                          if any(t.type == k for t in suite.tests))
        self.info.setText(f"{suite.name}: {suite.task}, {len(suite.tests)} tests ({kinds}), {suite.cases:,} cases")


class SuiteFix(QWidget):
    """The data and held-out fields with their "…" buttons, the fix's two buttons, the held-apart box and
    the summary; the tab connects the buttons."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.held_apart = QCheckBox("Held-apart cases only")
        self.held_apart.setToolTip("Judge every test on the half of its cases that fine-tuning never sees")
        self.data_file = QLineEdit()
        self.data_file.setPlaceholderText("your training data: the failures are added to a copy beside it")
        self.fix_button = QPushButton("Fine-tune on failures")
        self.allow("Run the suite first: the failing cases are what the fine-tune adds to your data.")
        self.label_button = QPushButton("Label failures…")
        self.label_button.setToolTip("Send the failing cases to Train's labelling table, to check each label "
                                     "before they are added to a copy of your data")
        self.label_button.setEnabled(False)
        self.held_out_file = QLineEdit()
        self.held_out_file.setPlaceholderText("held-out file (optional): evaluated before and after the fix")
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row("Fix it:", self.data_file, self._browse(self.data_file, "Your training data"),
                             self.fix_button, self.label_button, self.held_apart, stretch=self.data_file))
        layout.addLayout(row("Held-out:", self.held_out_file, self._browse(self.held_out_file, "Held-out data"),
                             stretch=self.held_out_file))
        layout.addWidget(self.summary)

    def _browse(self, field: QLineEdit, title: str) -> QPushButton:
        """A "…" button that puts a chosen data file in `field`."""
        def choose() -> None:
            path, _ = QFileDialog.getOpenFileName(self, title, "", DATA_FILES)
            if path:
                field.setText(path)

        button = QPushButton("…")
        button.clicked.connect(choose)
        return button

    def allow(self, why_not: str) -> None:
        """Fine-tune on failures on, or off with the reason in its tooltip (issue 40: a disabled
        button said nothing)."""
        self.fix_button.setEnabled(not why_not)
        self.fix_button.setToolTip(why_not or "Write your data plus the failing cases of each test's training "
                                   "half as a new file beside it, and open Train with it")


def fix_summary(report: Any) -> str:
    """One paragraph: which cases trained the fix and which measure it, what it fixed and broke, and the
    held-out figure before and after."""
    trained = sum(s.train for s in report.splits)
    measure = sum(s.measure for s in report.splits)
    found = report.measured_differences
    fixed, broken = sum(d.fixed for d in found), sum(d.broken for d in found)
    text = (f"Before: {Path(report.before.model).name}, after: {Path(report.after.model).name}. Each test's seeded "
            f"training half ({trained:,} cases) gave the training rows; the table judges both models on the other "
            f"half ({measure:,} cases training never saw): {fixed} fixed, {broken} broken.")
    accuracy = report.accuracy()
    if accuracy is not None:
        from bertstudio.core.suites.after import headline

        key = headline(report.held_out.a.metrics)
        change = accuracy[1] - accuracy[0]
        text += (f" Held-out {key} ({Path(report.held_out.a.data).name}): {accuracy[0]:.3f} → {accuracy[1]:.3f} "
                 f"({change * 100:+.1f} points).")
    else:
        text += " Give a held-out file to see its accuracy before and after."
    return text
