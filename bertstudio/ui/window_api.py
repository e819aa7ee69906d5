"""What the menus and the workspace use of the main window: its base class, and the menus' record.

`main_window` builds the menus and the workspace; when they named `MainWindow` back (for their
annotations) the three modules made an import circle. They name `StudioWindow` instead, a real
QMainWindow (a parent for dialogs and actions) that MainWindow fills in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QMenu, QTabWidget

from bertstudio.ui.log_panel import LogPanel
from bertstudio.ui.settings import AppSettings
from bertstudio.ui.tabs.frame import StudioTab
from bertstudio.workers.runner import TaskRunner


@dataclass
class Menus:
    """What the window keeps of its menus: the theme choices, the export worker, Copy as Python."""

    theme_actions: dict[str, QAction]
    export_runner: TaskRunner
    tab_menu: QMenu | None = None
    tab_actions: list[QAction] = field(default_factory=list)
    copy_action: QAction | None = None


class StudioWindow(QMainWindow):
    """`ui.main_window.MainWindow`, as far as `ui.menus` and `ui.workspace` read it."""

    settings: AppSettings
    tabs: QTabWidget
    task_tabs: dict[str, StudioTab]
    log: LogPanel
    menus: Menus
    workspace: Any  # ui.workspace.Workspace (it names this module)
    ready = Signal()  # torch/transformers imported, devices known

    def show_status(self, text: str) -> None:
        raise NotImplementedError

    def report_error(self, error: BaseException, context: str = "") -> None:
        raise NotImplementedError

    def choose_models_dir(self) -> None:
        raise NotImplementedError
