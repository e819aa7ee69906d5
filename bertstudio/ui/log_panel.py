"""A dock with every message and error: one readable line each, the details one click away.

A user error (BertStudioError) is a message and a hint, never a traceback; a bug is marked as
one. The details (the library's own error, the traceback) open from "Details…", so they stay
available without burying the message.
"""

from __future__ import annotations

import logging
import time
import traceback
import weakref

from PySide6.QtCore import Qt, QThread
from PySide6.QtWidgets import (
    QDockWidget,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.errors import BertStudioError, TaskCancelled

WATCHED_LOGGERS = ("bertstudio.workers.runner",)  # warnings raised inside jobs


class _PanelHandler(logging.Handler):
    """Log records of the watched loggers as lines of the panel (GUI thread only: the runner logs
    from its slots)."""

    def __init__(self, panel: LogPanel) -> None:
        super().__init__(logging.INFO)
        self._panel = weakref.ref(panel)

    def emit(self, record: logging.LogRecord) -> None:
        panel = self._panel()
        if panel is None or QThread.currentThread() is not panel.thread():
            return
        try:
            panel.info(f"warning: {record.getMessage()}" if record.levelno <= logging.INFO else record.getMessage())
        except RuntimeError:  # the panel's C++ side is gone
            _detach(self)


def _detach(handler: logging.Handler) -> None:
    for name in WATCHED_LOGGERS:
        logging.getLogger(name).removeHandler(handler)


def error_details(error: BaseException) -> str:
    """What a developer needs: the library's own error, then the traceback."""
    parts = [str(getattr(error, "details", "") or "")]
    if error.__traceback__ is not None or error.__cause__ is not None:
        parts.append("".join(traceback.format_exception(error)).rstrip())
    return "\n\n".join(part for part in parts if part)


class LogPanel(QDockWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Log", parent)
        self.setObjectName("log")
        self.view = QPlainTextEdit()
        self.view.setReadOnly(True)
        self.view.setMaximumBlockCount(5000)
        self.details_button = QPushButton("Details of the last error…")
        self.details_button.setEnabled(False)
        self.details_button.setToolTip("The full error behind the last message: library error and traceback")
        self.details_button.clicked.connect(self.show_details)
        self._last: tuple[str, str] = ("", "")  # (line, details)
        holder = QWidget()
        layout = QVBoxLayout(holder)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignRight)
        self.setWidget(holder)
        handler = _PanelHandler(self)
        for name in WATCHED_LOGGERS:
            logger = logging.getLogger(name)
            if logger.level == logging.NOTSET:
                logger.setLevel(logging.INFO)
            logger.addHandler(handler)
        self.destroyed.connect(lambda *_: _detach(handler))

    def info(self, text: str) -> None:
        self._append(f"{time.strftime('%H:%M:%S')}  {text}")

    def _append(self, text: str) -> None:
        """Add a line and keep following the end while the person has not scrolled up: Qt only follows
        when its bar was at the bottom, and in a small window (900x600) wrapped lines moved the bottom
        after the check, so the Log stopped following."""
        bar = self.view.verticalScrollBar()
        following = bar.value() >= bar.maximum() - 1
        self.view.appendPlainText(text)
        if following:
            bar.setValue(bar.maximum())

    def error(self, error: BaseException, context: str = "") -> None:
        """One line (and the hint); the details behind "Details…"."""
        expected = isinstance(error, BertStudioError)
        message = getattr(error, "message", None) or str(error) or type(error).__name__
        if not expected:
            message = f"internal error ({type(error).__name__}): {message}"
        head = " ".join(part for part in ("" if isinstance(error, TaskCancelled) else "ERROR", context) if part)
        lines = [f"{time.strftime('%H:%M:%S')}  {head + ': ' if head else ''}{message}"]
        hint = getattr(error, "hint", "")
        if hint:
            lines.append(f"    {hint}")
        details = error_details(error)
        if details:
            lines.append("    (Details of the last error… shows the full error)")
            self._last = (lines[0], details)
            self.details_button.setEnabled(True)
        self._append("\n".join(lines))

    @property
    def last_details(self) -> str:
        return self._last[1]

    def show_details(self) -> None:
        line, details = self._last
        if not details:
            return
        box = QMessageBox(QMessageBox.Icon.Critical, "Error details", line.split("  ", 1)[-1], parent=self)
        box.setDetailedText(details)
        box.open()

    def text(self) -> str:
        return self.view.toPlainText()
