"""The main window: one tab per capability, a status bar, a log panel, a clean shutdown."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QShowEvent
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMessageBox, QTabWidget

from bertstudio.core.progress import TaskControl
from bertstudio.ui.local_models import LocalModelsIndex
from bertstudio.ui.log_panel import LogPanel
from bertstudio.ui.settings import AppSettings
from bertstudio.ui.tabs import FIRST_TAB_MODULE, tab_classes, tab_modules
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.workers import runner as workers
from bertstudio.workers.runner import TaskRunner


def warm_up(control: TaskControl) -> tuple[list[str], dict[str, list[str]]]:
    """Import torch and transformers in the background; report the devices found."""
    control.report("Loading torch and transformers…")
    import transformers  # noqa: F401  # the slow import, done here and not at start-up

    from bertstudio.core import devices
    from bertstudio.core.models import quiet_transformers

    quiet_transformers()
    found = devices.available_devices()
    return found, {device: devices.dtypes_for(device) for device in found}


class MainWindow(QMainWindow):
    shown = Signal()
    ready = Signal()  # torch/transformers imported, devices known

    def __init__(self, settings: AppSettings | None = None, confirm_close: bool = True) -> None:
        super().__init__()
        self.setWindowTitle("BERT Studio")
        self.resize(1180, 780)
        self.settings = settings or AppSettings()
        self.confirm_close = confirm_close
        self.log = LogPanel(self)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.log)
        self.resizeDocks([self.log], [110], Qt.Orientation.Vertical)
        self.models_index = LocalModelsIndex(self.settings, self)
        self.models_index.failed.connect(lambda error: self.report_error(error, "models folder"))
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.setCentralWidget(self.tabs)
        self.task_tabs: dict[str, TaskTab] = {}
        self._add_tabs(tab_classes([FIRST_TAB_MODULE]))
        self._build_menu()
        self._warm_runner = TaskRunner(self)
        self._warm_runner.result.connect(self._on_warm)
        self._warm_runner.error.connect(lambda error: self.report_error(error, "start-up"))
        self.statusBar().showMessage("Ready. Loading torch in the background…")

    def _add_tabs(self, classes: list[type]) -> None:
        """Insert tabs at their ORDER among those already there."""
        for tab_class in classes:
            tab = tab_class(self.settings, self.models_index)
            tab.status.connect(self.show_status)
            tab.failed.connect(lambda error, title=tab.TITLE: self.report_error(error, title))
            index = sum(1 for other in self.task_tabs.values() if other.ORDER <= tab.ORDER)
            self.tabs.insertTab(index, tab, tab.TITLE)
            self.task_tabs[tab.TASK] = tab

    def _finish_start(self) -> None:
        """After the first paint: the other tabs, then torch in the background, then the models folder."""
        if not self.isVisible():  # closed before the event loop got here
            return
        self._add_tabs(tab_classes([m for m in tab_modules() if m != FIRST_TAB_MODULE]))
        self._warm_runner.start(warm_up)
        self.models_index.rescan()

    def _build_menu(self) -> None:
        menu = self.menuBar().addMenu("&File")
        choose = QAction("Set models folder…", self)
        choose.triggered.connect(self._choose_models_dir)
        menu.addAction(choose)
        quit_action = QAction("Quit", self)
        quit_action.setShortcut("Ctrl+Q")
        quit_action.triggered.connect(self.close)
        menu.addAction(quit_action)
        view = self.menuBar().addMenu("&View")
        view.addAction(self.log.toggleViewAction())

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not getattr(self, "_started", False):
            self._started = True
            self.shown.emit()
            QTimer.singleShot(0, self._finish_start)

    def _on_warm(self, found: tuple[list[str], dict[str, list[str]]]) -> None:
        devices, dtypes = found
        for tab in self.task_tabs.values():
            tab.model_bar.set_devices(devices, dtypes)
        self.show_status(f"Ready. Devices: {', '.join(devices)}")
        self.ready.emit()

    def _choose_models_dir(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Folder of model folders", self.settings.models_dir)
        if folder:
            self.settings.set_models_dir(folder)

    def show_status(self, text: str) -> None:
        self.statusBar().showMessage(text, 15_000)
        self.log.info(text)

    def report_error(self, error: BaseException, context: str = "") -> None:
        text = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
        self.statusBar().showMessage(f"{context}: {text}" if context else text, 30_000)
        self.log.error(error, context)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        """Confirm if work is running, then stop it and wait (bounded) so no thread outlives us."""
        if TaskRunner.any_busy() and self.confirm_close:
            answer = QMessageBox.question(
                self, "Work in progress", "A task is still running. Stop it and quit?",
            )
            if answer != QMessageBox.StandardButton.Yes:
                event.ignore()
                return
        self.statusBar().showMessage("Stopping running tasks…")
        workers.shutdown(timeout_ms=30_000)
        event.accept()
