"""The row under a task's inputs (options, examples, compare, heads off, Run/Cancel/Explain) and
the progress line above its results: the same widgets on every task tab, built once here."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.progress import ProgressEvent
from bertstudio.ui import theme
from bertstudio.ui.widgets.compare_panel import CompareSource
from bertstudio.ui.widgets.elided_label import ElidedLabel
from bertstudio.ui.widgets.flow_layout import FlowLayout, HeightForWidth, group

STALE_OPACITY = 0.45  # how visible a result that belongs to an older input stays


def problem_colour() -> str:
    """Red that reads on the light and the dark background."""
    return "#ff7b72" if theme.manager().scheme() == "dark" else "#a40000"


class RunControls(HeightForWidth):
    """`options` is a layout a view fills with its own small options (top-k, aggregation...)."""

    def __init__(self, run_label: str, suggestions: QComboBox | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.options = FlowLayout()  # a view's options wrap (QA's five held its tab at 901 pixels)
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
        # where the heads came from ("from Attention, 3 heads"), a one-click Clear, and what is wrong with them
        self.heads_origin = QLabel()
        self.heads_origin.setVisible(False)
        self.heads_clear = QToolButton()
        self.heads_clear.setText("Clear")
        self.heads_clear.setToolTip("Switch every head back on")
        self.heads_clear.setVisible(False)
        self.heads_problem = QLabel()
        self.heads_problem.setWordWrap(True)
        self.heads_problem.setVisible(False)
        self.run_button = QPushButton(run_label)
        self.run_button.setToolTip("Run (Ctrl+Enter)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Cancel (Esc)")
        self.cancel_button.setEnabled(False)
        self.explain_button = QPushButton("Explain…")
        self.explain_button.setToolTip("Which input tokens and heads made this result")
        self.explain_button.setEnabled(False)
        # Two rows, so that a view with many options (QA) still fits a 1280-pixel window; the second
        # wraps (compare, heads off, the buttons) below ~940 pixels, so a 900-pixel window keeps Run.
        first, second = QHBoxLayout(), FlowLayout()
        first.addLayout(self.options, 2)  # the options before the progress line (stretch 1) when space is short
        first.addWidget(self.examples_combo)
        self._first = first
        self._stretch = first.count()
        first.addStretch(1)
        second.addWidget(self.compare_source)
        second.addWidget(group(QLabel("Heads off:"), self.heads_off, self.heads_origin, self.heads_clear))
        second.addWidget(group(self.run_button, self.cancel_button, self.explain_button))
        rows = QVBoxLayout(self)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.addLayout(first)
        rows.addLayout(second)
        rows.addWidget(self.heads_problem)

    def add_progress(self, progress: QWidget) -> None:
        """The progress line takes the free end of the options row: it costs the results no height,
        and (keeping its size when hidden) nothing moves when a run starts or ends."""
        item = self._first.takeAt(self._stretch)
        del item
        self._first.addWidget(progress, 1)

    def show_heads(self, origin: str, problem: str) -> None:
        """The heads-off field's origin ("" when typed or empty) and what is wrong with it ("" when nothing)."""
        has_heads = bool(self.heads_off.text().strip())
        self.heads_origin.setText(origin)
        self.heads_origin.setVisible(bool(origin) and has_heads)
        self.heads_clear.setVisible(has_heads)
        colour = problem_colour()
        self.heads_problem.setText(f"<span style='color:{colour}'>Heads off: {problem}</span>" if problem else "")
        self.heads_problem.setVisible(bool(problem))
        self.heads_off.setStyleSheet(f"QLineEdit {{ border: 2px solid {colour}; }}" if problem else "")


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
        self.label = ElidedLabel()  # a long message is elided, never widens the window
        self.bar = QProgressBar()
        self.bar.setMaximumHeight(14)
        self.bar.setTextVisible(False)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.bar, 1)
        policy = self.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # the results below never jump when a run starts or ends
        self.setSizePolicy(policy)
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


class Veil(QWidget):
    """A translucent cover over the results: they stay readable (and hoverable) but look faded.
    (A QGraphicsOpacityEffect would also fade them, but renders pyqtgraph's views dark and slow.)"""

    def __init__(self, results: QWidget) -> None:
        super().__init__(results)
        self.results = results  # the parent it covers
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        results.installEventFilter(self)
        self.setVisible(False)

    def cover(self, on: bool) -> None:
        if on:
            colour = self.palette().window().color()
            alpha = int(255 * (1 - STALE_OPACITY))
            self.setStyleSheet(f"background: rgba({colour.red()}, {colour.green()}, {colour.blue()}, {alpha});")
            self.setGeometry(self.results.rect())
            self.raise_()
        self.setVisible(on)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self.setGeometry(self.results.rect())
        return False


class StaleBanner(QLabel):
    """Says that the result below belongs to an earlier input, model or heads (and fades the result)."""

    def __init__(self, results: QWidget, parent: QWidget | None = None,
                 action: str = "Press Run (Ctrl+Enter) to update it.") -> None:
        super().__init__(parent)
        self.action = action  # how this tab brings the result up to date, in its own button's words
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setVisible(False)
        self.reason = ""
        self.veil = Veil(results)

    def show_for(self, reason: str) -> None:
        """`reason`: what changed ("input", "model", ...); "" hides the banner and the veil."""
        self.reason = reason
        if reason:
            c = theme.colors()
            self.setStyleSheet(f"QLabel {{ background: rgba{c.highlight}; color: {c.foreground}; "
                               "padding: 4px; border-radius: 3px; }")
            self.setText(f"<b>Out of date:</b> this result is for the previous {reason}. "
                         + self.action)
        self.veil.cover(bool(reason))
        self.setVisible(bool(reason))
