"""The row under a task's inputs (options, examples, compare, heads off, Run/Cancel/Explain) and
the progress line above its results: the same widgets on every task tab, built once here."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.progress import ProgressEvent
from bertstudio.ui.widgets.compare_panel import CompareSource


class RunControls(QWidget):
    """`options` is a layout a view fills with its own small options (top-k, aggregation...)."""

    def __init__(self, run_label: str, suggestions: QComboBox | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.options = QHBoxLayout()
        self.examples_combo = QComboBox()
        self.examples_combo.addItem("Examples…")
        self.examples_combo.setMaximumWidth(220)
        self.compare_source = CompareSource(suggestions)
        self.heads_off = QLineEdit()
        self.heads_off.setPlaceholderText("none, e.g. 0:1, 2:3")
        self.heads_off.setMinimumWidth(120)
        self.heads_off.setMaximumWidth(160)
        self.heads_off.setToolTip("Switch these attention heads off (0-based layer:head) and show the result "
                                  "beside the intact model's")
        self.run_button = QPushButton(run_label)
        self.run_button.setToolTip("Run (Ctrl+Enter)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Cancel (Esc)")
        self.cancel_button.setEnabled(False)
        self.explain_button = QPushButton("Explain…")
        self.explain_button.setToolTip("Which input tokens and heads made this result")
        self.explain_button.setEnabled(False)
        # Two rows, so that a view with many options (QA) still fits a 1280-pixel window.
        first, second = QHBoxLayout(), QHBoxLayout()
        first.addLayout(self.options)
        first.addWidget(self.examples_combo)
        first.addStretch(1)
        second.addWidget(self.compare_source, 1)
        second.addWidget(QLabel("Heads off:"))
        second.addWidget(self.heads_off)
        for button in (self.run_button, self.cancel_button, self.explain_button):
            second.addWidget(button)
        rows = QVBoxLayout(self)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.addLayout(first)
        rows.addLayout(second)

    def set_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        if running:
            self.explain_button.setEnabled(False)


def show_fraction(bar: QProgressBar, fraction: float | None) -> None:
    """How far the work got, or a busy bar when it cannot say."""
    if fraction is None:
        bar.setRange(0, 0)
    else:
        bar.setRange(0, 1000)
        bar.setValue(int(fraction * 1000))


class ProgressLine(QWidget):
    """What the running job says it is doing, and how far it got (busy when it cannot say)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel()
        self.bar = QProgressBar()
        self.bar.setMaximumHeight(14)
        self.bar.setTextVisible(False)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label)
        row.addWidget(self.bar, 1)
        self.setVisible(False)

    def start(self) -> None:
        self.label.setText("")
        self.bar.setRange(0, 0)
        self.setVisible(True)

    def show_event(self, event: ProgressEvent) -> None:
        show_fraction(self.bar, event.fraction)
        self.label.setText(event.message)

    def stopping(self) -> None:
        self.label.setText("Cancelling…")

    def stop(self) -> None:
        self.setVisible(False)
