"""What the menus and the workspace use of the main window, as a Protocol.

`main_window` builds the menus and the workspace; when they named `MainWindow` back (for their
annotations) the three modules made an import circle. They name this instead, and it imports
nothing of ours.
"""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import QByteArray, SignalInstance
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenuBar, QTabWidget


class StudioWindow(Protocol):
    """`ui.main_window.MainWindow`, as far as `ui.menus` and `ui.workspace` read it."""

    tabs: QTabWidget
    task_tabs: dict[str, Any]  # key -> tabs.frame.StudioTab
    log: Any  # ui.log_panel.LogPanel
    menus: Any  # ui.menus.Menus
    workspace: Any  # ui.workspace.Workspace
    ready: SignalInstance

    def show_status(self, text: str) -> None: ...
    def report_error(self, error: BaseException, context: str = "") -> None: ...
    def choose_models_dir(self) -> None: ...
    # QMainWindow's own
    def menuBar(self) -> QMenuBar: ...  # noqa: N802 - Qt's name
    def addAction(self, action: QAction) -> None: ...  # noqa: N802 - Qt's name
    def close(self) -> bool: ...
    def saveGeometry(self) -> QByteArray: ...  # noqa: N802 - Qt's name
    def saveState(self, version: int = 0) -> QByteArray: ...  # noqa: N802 - Qt's name
    def restoreGeometry(self, geometry: QByteArray) -> bool: ...  # noqa: N802 - Qt's name
    def restoreState(self, state: QByteArray, version: int = 0) -> bool: ...  # noqa: N802 - Qt's name
