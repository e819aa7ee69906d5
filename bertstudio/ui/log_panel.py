"""A dock with every message and error in full (hint, details, traceback)."""

from __future__ import annotations

import time
import traceback

from PySide6.QtWidgets import QDockWidget, QPlainTextEdit, QWidget


class LogPanel(QDockWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Log", parent)
        self.setObjectName("log")
        self.view = QPlainTextEdit()
        self.view.setReadOnly(True)
        self.view.setMaximumBlockCount(5000)
        self.setWidget(self.view)

    def info(self, text: str) -> None:
        self.view.appendPlainText(f"{time.strftime('%H:%M:%S')}  {text}")

    def error(self, error: BaseException, context: str = "") -> None:
        lines = [f"{time.strftime('%H:%M:%S')}  ERROR {context}: {getattr(error, 'message', None) or error}"]
        for extra in (getattr(error, "hint", ""), getattr(error, "details", "")):
            if extra:
                lines.append(f"    {extra}")
        if error.__traceback__ is not None:
            lines.append("".join(traceback.format_exception(error)).rstrip())
        self.view.appendPlainText("\n".join(lines))

    def text(self) -> str:
        return self.view.toPlainText()
