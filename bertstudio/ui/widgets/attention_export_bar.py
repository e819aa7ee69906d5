"""The attention tab's Export menu. One head or a picture is written at once; all heads (tens of
millions of values at 512 tokens) are written by a second TaskRunner, with progress and Cancel,
so neither the GUI thread nor the tab's model job waits for the disk.

The bar knows its tab only as an `ExportHost` (what it reads and calls), so this module does not
import the tab that holds it (the tab <-> bar import circle of issue 18). Value-weighted norms
travel with the result: the .npz files get `norms`, the long CSV a `norm` column, the JSON
`norms`, and the head's CSV is the detail matrix as shown (norms when the view shows them)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QMenu, QProgressBar, QPushButton, QTabWidget, QWidget

from bertstudio.core.progress import ProgressEvent
from bertstudio.workers.runner import TaskRunner

if TYPE_CHECKING:
    from bertstudio.core.tasks.attention.bundle import AttentionBundle
    from bertstudio.core.tasks.attention.state import AttentionViewState
    from bertstudio.ui.settings import AppSettings


class ExportHost(Protocol):
    """What the export bar needs of the tab that holds it."""

    bundle: AttentionBundle | None
    view_state: AttentionViewState
    views: QTabWidget
    status: SignalInstance
    settings: AppSettings

    def show_message(self, text: str, error: bool = False) -> None: ...


CHOICES = (("Current view as PNG…", "png", "PNG image (*.png)"), ("Selected head as CSV…", "csv-head", "CSV (*.csv)"),
           ("Selected head as .npz…", "npz-head", "NumPy (*.npz)"), ("All heads as .npz…", "npz-all", "NumPy (*.npz)"),
           ("All heads as CSV (long)…", "csv-all", "CSV (*.csv)"), ("All heads as JSON…", "json", "JSON (*.json)"))


class ExportBar(QWidget):
    def __init__(self, tab: ExportHost, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tab = tab
        self.button = QPushButton("Export")
        menu = QMenu(self.button)
        for label, what, pattern in CHOICES:
            menu.addAction(label, functools.partial(self.export_dialog, what, pattern))
        self.button.setMenu(menu)
        self.button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.progress.setVisible(False)
        self.cancel = QPushButton("Cancel export")
        self.cancel.setVisible(False)
        self.runner = TaskRunner(self)  # its own runner: an export never supersedes the model job
        self.cancel.clicked.connect(self.runner.cancel)
        self.runner.started.connect(lambda: self._busy(True))
        self.runner.finished.connect(lambda: self._busy(False))
        self.runner.progress.connect(self._progress)
        self.runner.result.connect(lambda path: tab.status.emit(f"Attention: exported to {path}"))
        self.runner.error.connect(lambda error: tab.show_message(f"Could not export: {error}", error=True))
        self.runner.cancelled.connect(lambda: tab.show_message("Export cancelled; nothing was written."))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.progress, self.cancel, self.button):
            layout.addWidget(widget)

    def setEnabled(self, enabled: bool) -> None:  # noqa: N802 - the Qt name, applied to the menu button only
        self.button.setEnabled(enabled)

    def _busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel.setVisible(busy)
        self.progress.setRange(0, 0)

    def _progress(self, event: ProgressEvent) -> None:
        if event.fraction is not None:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(event.fraction * 1000))
        self.progress.setFormat(event.message)

    def export_dialog(self, what: str, pattern: str) -> None:
        settings = self.tab.settings
        path, _ = QFileDialog.getSaveFileName(self, "Export attention", settings.save_path(""), pattern)
        settings.remember_save(path)
        if path:
            self.export(Path(path), what)

    def export(self, path: Path, what: str) -> None:
        """Write the current view (png), the detail matrix (csv-head / npz-head) or all heads."""
        from bertstudio.core.tasks.attention import export
        from bertstudio.core.tasks.attention.bundle import detail_matrix

        tab, bundle = self.tab, self.tab.bundle
        if bundle is None:
            tab.show_message("Nothing to export yet: show some attention first.", error=True)
            return
        if what in export.ALL_HEADS_SUFFIX:
            self.runner.start(export.export_all, path, bundle.result, what)
            return
        settings = tab.view_state.settings
        try:
            if what == "png":
                if not tab.views.currentWidget().grab().save(str(path)):
                    raise OSError(f"could not write {path}")
            elif what == "csv-head":
                matrix, queries, keys, _title = detail_matrix(bundle, settings)
                export.save_matrix_csv(path, matrix, queries, keys)
            elif what == "npz-head":
                export.save_npz(path, bundle.result, settings.layer, settings.head)
            else:
                raise ValueError(what)
        except OSError as error:
            tab.show_message(f"Could not write {path}: {error}", error=True)
            return
        tab.status.emit(f"Attention: exported to {path}")
