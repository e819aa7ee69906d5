"""The main window: one tab per capability, a status bar, a log panel, a clean shutdown."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import QFileDialog, QMessageBox, QTabWidget

from bertstudio.core.errors import BertStudioError, InputError
from bertstudio.core.progress import TaskControl
from bertstudio.ui import gc_guard, menus, screen_fit, theme, wheel_guard, wiring, workspace
from bertstudio.ui.local_models import LocalModelsIndex
from bertstudio.ui.log_panel import LogPanel
from bertstudio.ui.settings import AppSettings
from bertstudio.ui.tabs import FIRST_TAB_MODULE, tab_classes, tab_modules
from bertstudio.ui.tabs.frame import StudioTab
from bertstudio.ui.window_api import StudioWindow
from bertstudio.workers.runner import TaskRunner


def warm_up(control: TaskControl) -> tuple[list[str], dict[str, list[str]]]:
    """Import torch and transformers in the background; report the devices found."""
    control.report("Loading torch and transformers…")
    from bertstudio.core import devices
    from bertstudio.core.lazy_imports import import_transformers
    from bertstudio.core.models import quiet_transformers

    import_transformers()  # the slow import, here and not at start-up; on this one thread (see lazy_imports)
    quiet_transformers()
    found = devices.available_devices()
    return found, {device: devices.dtypes_for(device) for device in found}


class MainWindow(StudioWindow):
    shown = Signal()

    def __init__(self, settings: AppSettings | None = None, confirm_close: bool = True) -> None:
        super().__init__()
        gc_guard.install()  # before any worker can run: Qt objects must die on this thread
        wheel_guard.install()  # before any field exists: the wheel scrolls, it changes only a focused field
        screen_fit.install()  # every window and dialog fits the screen it opens on
        self.setWindowTitle("BERT Studio")
        self.resize(1180, 780)  # clamped to the screen when shown (screen_fit)
        self.settings = settings or AppSettings()
        self.confirm_close = confirm_close
        theme.manager().restore(self.settings.store)  # light/dark before anything is drawn
        self.log = LogPanel(self)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.log)
        self.resizeDocks([self.log], [110], Qt.Orientation.Vertical)
        self.models_index = LocalModelsIndex(self.settings, self)
        self.models_index.failed.connect(lambda error: self.report_error(error, "models folder"))
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.setCentralWidget(self.tabs)
        self.task_tabs: dict[str, StudioTab] = {}
        self._add_tabs(tab_classes([FIRST_TAB_MODULE]))
        self.menus = menus.install(self)  # File (workspace, export), Edit (Copy as Python), View (theme, tabs), Help
        self.workspace = workspace.Workspace(self)
        self._workspace_ready = False  # the last workspace is saved on close only once all tabs exist
        self._warm_runner = TaskRunner(self)
        self._warm_runner.result.connect(self._on_warm)
        self._warm_runner.error.connect(self._on_warm_failed)
        self.workspace.problems.connect(self._workspace_problems)
        self.statusBar().showMessage("Ready. Loading torch in the background…")

    def _add_tabs(self, classes: list[type[StudioTab]]) -> None:
        """Insert tabs at their ORDER among those already there."""
        for tab_class in classes:
            tab = tab_class(self.settings, self.models_index)
            tab.status.connect(self.show_status)
            tab.failed.connect(lambda error, title=tab.TITLE: self.report_error(error, title))
            index = sum(1 for other in self.task_tabs.values() if other.ORDER <= tab.ORDER)
            self.tabs.insertTab(index, tab, tab.TITLE)
            self.task_tabs[tab.TASK] = tab
            wiring.connect_tab(self.tabs, self.task_tabs, tab)

    def open_evaluation(self, model_source: str, data_file: str, task_key: str) -> None:
        """The Train tab's "Evaluate": the trained model on its validation file, in the Evaluate tab."""
        wiring.open_evaluation(self.tabs, model_source, data_file, task_key)

    def _finish_start(self) -> None:
        """After the first paint: the other tabs, torch in the background, the last workspace.

        The models folder scan and every model load wait until the warm-up has imported
        transformers (`_after_warm`): started beside it, they raced its lazy import."""
        if not self.isVisible():  # closed before the event loop got here
            return
        self._add_tabs(tab_classes([m for m in tab_modules() if m != FIRST_TAB_MODULE]))
        self.models_index.list_now()  # the models folder's names at once; judged after the warm-up
        self._warm_runner.start(warm_up)
        self._restore_last_workspace()

    def _restore_last_workspace(self) -> None:
        """Sources, inputs and layout now; each model loads in the background when its tab is shown."""
        path = workspace.last_workspace_path(self.settings.store)
        self._workspace_ready = True  # whatever the file holds, closing saves the window as it is then
        if path.exists():
            try:
                self.workspace.apply(workspace.read(path))
            except BertStudioError as error:
                self.report_error(error, "last workspace")

    def _workspace_problems(self, checked: workspace.workspace_file.Checked) -> None:
        """Fields left out of a workspace: one line in the status bar and the log (every field in its
        details), and a note that does not block (the rest is back and the window is usable)."""
        message, details = checked.message(), "\n".join(checked.problems)
        self.report_error(InputError(message, details=details), "workspace")
        note = QMessageBox(QMessageBox.Icon.Warning, "Workspace", message, QMessageBox.StandardButton.Ok, self)
        note.setDetailedText(details)
        note.setModal(False)
        note.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.workspace_note = note
        note.show()

    def save_last_workspace(self) -> None:
        """On close: the window as it is now (never a half-restored one). Nothing here may stop the
        close: a full disk, or a bug in a tab's state, is one line in the log and the window still goes."""
        if self._workspace_ready and not self.workspace.restoring:
            try:
                workspace.write(workspace.last_workspace_path(self.settings.store), workspace.capture(self))
            except Exception as error:  # see the docstring: closing must not fail
                self.log.error(error, "saving the last workspace")

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not getattr(self, "_started", False):
            self._started = True
            self.shown.emit()
            QTimer.singleShot(0, self._finish_start)

    def _on_warm(self, found: tuple[list[str], dict[str, list[str]]]) -> None:
        devices, dtypes = found
        for tab in self.task_tabs.values():
            tab.set_devices(devices, dtypes)
        self.show_status(f"Ready. Devices: {', '.join(devices)}")
        self._after_warm()
        self.ready.emit()

    def _on_warm_failed(self, error: BaseException) -> None:
        self.report_error(error, "start-up")
        self._after_warm()  # loads and the scan then say what is wrong, each in its place

    def _after_warm(self) -> None:
        """transformers is imported: now the models folder and the restored models may load."""
        self.models_index.rescan()
        self.workspace.allow_loads()

    def choose_models_dir(self) -> None:
        """File > Set models folder…: ask for the folder of model folders and remember it."""
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
        """Ask about a training run, cancel the rest; close when the work has ended (see ui/shutdown)."""
        from bertstudio.ui.shutdown import CloseGuard

        if not hasattr(self, "close_guard"):
            self.close_guard = CloseGuard(self, self.confirm_close)
        if not self.close_guard.accept_now(event):
            return
        self.save_last_workspace()
        event.accept()
