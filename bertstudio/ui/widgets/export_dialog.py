"""File → Export model to ONNX…: source, task head and target file; the export runs in a worker
(progress, Cancel) and the dialog shows the validation's largest difference and the speeds."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.errors import BertStudioError
from bertstudio.core.export.onnx import ExportResult, export_onnx, exportable_tasks
from bertstudio.core.progress import ProgressEvent
from bertstudio.core.tasks.spec import spec_for
from bertstudio.workers.runner import TaskRunner


class ExportDialog(QDialog):
    """One export at a time; closing while it runs cancels it (the target is only written when valid)."""

    def __init__(self, source: str = "", task: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export model to ONNX")
        self.exported: ExportResult | None = None  # the last valid export (QDialog has a result())
        self.source = QLineEdit(source)
        self.source.setPlaceholderText("model folder or Hub id")
        browse_model = QPushButton("Folder…")
        browse_model.clicked.connect(self._choose_model)
        self.task = QComboBox()
        for key in exportable_tasks():
            self.task.addItem(spec_for(key).title, key)
        if task is not None and self.task.findData(task) >= 0:
            self.task.setCurrentIndex(self.task.findData(task))
        self.output = QLineEdit()
        self.output.setPlaceholderText("model.onnx")
        browse_output = QPushButton("Choose…")
        browse_output.clicked.connect(self._choose_output)
        self.speed = QCheckBox("Time onnxruntime vs PyTorch vs int8 (CPU)")
        self.speed.setChecked(True)
        form = QFormLayout()
        form.addRow("Model", _row(self.source, browse_model))
        form.addRow("Task head", self.task)
        form.addRow("Output", _row(self.output, browse_output))
        form.addRow("", self.speed)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.status = QLabel("Exported files are checked with onnxruntime against PyTorch before they are kept.")
        self.status.setWordWrap(True)
        self.report = QPlainTextEdit()
        self.report.setReadOnly(True)
        self.report.setMinimumHeight(90)
        self.export_button = QPushButton("Export")
        self.export_button.setDefault(True)
        self.export_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Close")
        self.cancel_button.clicked.connect(self._cancel_or_close)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        buttons.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        for widget in (self.progress, self.status, self.report):
            layout.addWidget(widget)
        layout.addLayout(buttons)
        self.runner = TaskRunner(self)
        self.runner.progress.connect(self._on_progress)
        self.runner.result.connect(self._on_result)
        self.runner.error.connect(self._on_error)
        self.runner.cancelled.connect(lambda: self.status.setText("Cancelled: nothing was written."))
        self.runner.stopping.connect(lambda: self.status.setText("Cancelling…"))
        self.runner.finished.connect(lambda: self._set_busy(False))
        self.resize(560, 380)

    def start(self) -> None:
        """Export in the worker; the form is locked until it ends."""
        source, output = self.source.text().strip(), self.output.text().strip()
        if not source or not output:
            self.status.setText("Choose a model and an output file first.")
            return
        overwrite = Path(output).expanduser().exists()
        if overwrite and not self.confirm_replace(output):
            self.status.setText("Nothing was written: choose another output file.")
            return
        self.exported = None
        self.report.clear()
        self.progress.setValue(0)
        self._set_busy(True)
        self.runner.start(export_onnx, source, self.task.currentData(), output, speed=self.speed.isChecked(),
                          overwrite=overwrite)

    def confirm_replace(self, output: str) -> bool:
        """The export replaces an existing file only when the user says so (the output policy)."""
        answer = QMessageBox.question(self, "Replace the file?", f"'{output}' exists. Replace it with the export?",
                                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                      QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def _set_busy(self, busy: bool) -> None:
        for widget in (self.source, self.task, self.output, self.speed, self.export_button):
            widget.setEnabled(not busy)
        self.cancel_button.setText("Cancel" if busy else "Close")

    def _cancel_or_close(self) -> None:
        if self.runner.busy:
            self.runner.cancel()
        else:
            self.close()

    def closeEvent(self, event) -> None:  # noqa: ANN001, N802 - Qt's name
        self.runner.cancel(emit=False)
        super().closeEvent(event)

    def _on_progress(self, event: ProgressEvent) -> None:
        self.status.setText(event.message)
        if event.fraction is not None:
            self.progress.setValue(int(event.fraction * 100))

    def _on_result(self, result: ExportResult) -> None:
        self.exported = result
        self.progress.setValue(100)
        self.status.setText(f"Largest difference onnxruntime vs PyTorch: {result.max_difference:.2e}")
        self.report.setPlainText(result.text)

    def _on_error(self, error: BaseException) -> None:
        self.progress.setValue(0)
        self.status.setText(str(error) if isinstance(error, BertStudioError) else f"Export failed: {error}")

    def _choose_model(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose a model folder", self.source.text())
        if folder:
            self.source.setText(folder)

    def _choose_output(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export to ONNX", self.output.text() or "model.onnx",
                                              "ONNX model (*.onnx)")
        if path:
            self.output.setText(path if path.lower().endswith(".onnx") else path + ".onnx")


def _row(*widgets: QWidget) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget, 1 if isinstance(widget, QLineEdit) else 0)
    return row
