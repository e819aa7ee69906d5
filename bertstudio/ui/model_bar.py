"""The model bar every tab carries: source, device, Load with progress, model facts, head warnings."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.errors import BertStudioError, OutOfMemory
from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.core.progress import ProgressEvent, TaskControl
from bertstudio.core.tasks.spec import spec_for
from bertstudio.ui import theme
from bertstudio.ui.local_models import LocalModelsIndex
from bertstudio.ui.settings import AppSettings
from bertstudio.ui.widgets.elided_label import ElidedLabel
from bertstudio.ui.widgets.forms import listed_or_typed
from bertstudio.ui.widgets.run_controls import show_fraction
from bertstudio.workers.runner import TaskRunner


def load_job(request: LoadRequest, control: TaskControl) -> ModelInfo:
    """Worker side of Load: only the frozen ModelInfo travels back to the GUI thread."""
    from bertstudio.core.lazy_imports import import_transformers
    from bertstudio.core.models import load_model

    import_transformers()  # waits for a start-up import in another thread instead of racing it
    return load_model(request, control).info


INT8_CHOICE = "int8 (CPU)"  # the number-format choice that loads float32 and quantizes it (core/quantize.py)
# The device choice that runs the folder's exported model (model.onnx) on ONNX Runtime: offered only
# when the chosen source has one and the task runs there (core/export/onnx_runtime.py).
ONNX_CHOICE = "CPU (ONNX Runtime)"


def describe_model(info: ModelInfo) -> str:
    facts = [
        info.architecture,
        f"{info.parameters / 1e6:.1f} M parameters",
        f"{info.layers} layers" if info.layers else "",
        f"{info.heads} heads" if info.heads else "",
        f"hidden {info.hidden_size}" if info.hidden_size else "",
        f"vocabulary {info.vocab_size:,}",
        f"max {info.max_length} tokens",
        ONNX_CHOICE if info.request.runtime == "onnx" else f"{info.request.device} "
        f"{info.request.quantize or info.request.dtype}" + (" dynamic" if info.request.quantize else ""),
        f"{info.size_mb:.1f} MB" if info.size_mb else "",
    ]
    return " · ".join(f for f in facts if f)


def _notice(colors: Callable[[theme.Colors], tuple[str, str]]) -> QLabel:
    """A hidden, wrapped label in the theme's (background, text) colors: the bar's warning or error."""
    label = QLabel()
    label.setWordWrap(True)
    theme.follow(label, lambda c: "QLabel {{ background: {0}; color: {1}; border: 1px solid {1}; padding: 4px; }}"
                 .format(*colors(c)))
    label.setVisible(False)
    return label


class ModelBar(QWidget):
    """Chooses and loads the model for one task; emits `loaded` with the ModelInfo."""

    loaded = Signal(object)  # ModelInfo
    failed = Signal(object)  # exception
    busy_changed = Signal(bool)

    def __init__(
        self,
        task: str,
        settings: AppSettings,
        index: LocalModelsIndex,
        attn_implementation: str | None = None,
        parent: QWidget | None = None,
        onnx: bool = False,
    ) -> None:
        super().__init__(parent)
        self._task = task
        self._onnx = onnx  # the tab runs whole forwards only, so an exported model may run it
        self.attn_implementation = attn_implementation
        self.info: ModelInfo | None = None
        self._settings = settings
        self._runner = TaskRunner(self)
        self._build_source(task, settings)
        self._build_choices()
        self._build_labels()
        self._lay_out()
        self._runner.started.connect(lambda: self._set_busy(True))
        self._runner.finished.connect(lambda: self._set_busy(False))
        self._runner.progress.connect(self._on_progress)
        self._runner.result.connect(self._on_loaded)
        self._runner.error.connect(self._on_error)
        self._runner.cancelled.connect(self._on_cancelled)
        self._runner.stopping.connect(self._on_stopping)
        index.changed.connect(self.set_local_models)
        self.set_local_models(index.models)
        self.offer_runtimes()

    def _build_source(self, task: str, settings: AppSettings) -> None:
        self.source = QComboBox(editable=True)
        # Enter must not add the typed text as an item: such an item has no folder data, and
        # source_text() then answered 'None' for that path from then on (issue 19.2).
        self.source.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.source.setMinimumWidth(320)
        self.source.setToolTip("A Hugging Face Hub id (online) or a local model folder")
        editor = self.source.lineEdit()
        assert editor is not None  # an editable combo box has one
        editor.setPlaceholderText(spec_for(task).default_model)
        editor.returnPressed.connect(self.load)
        self.source.setEditText(settings.last_source(task) or spec_for(task).default_model)
        self.source.editTextChanged.connect(lambda _text: self.offer_runtimes())
        self.open_button = QPushButton("Open folder…")
        self.open_button.clicked.connect(self._choose_folder)

    def _build_choices(self) -> None:
        """Device, number format, Load/Cancel/Retry on CPU and the load's progress."""
        self.device = QComboBox()
        self.device.addItem("cpu")
        self.device.setToolTip("Where the model runs")
        self.dtype = QComboBox()
        self.dtype.addItems(["float32", INT8_CHOICE])
        self.dtype.setToolTip("Number format (half precision on GPUs only; int8: the float32 model dynamically "
                              "quantized, smaller and faster on the CPU)")
        self.device.currentTextChanged.connect(self._device_chosen)
        self.load_button = QPushButton("Load")
        self.load_button.setDefault(True)
        self.load_button.clicked.connect(lambda: self.load())
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.retry_cpu_button = QPushButton("Retry on CPU")
        self.retry_cpu_button.setVisible(False)
        self.retry_cpu_button.clicked.connect(self._retry_on_cpu)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(160)
        self.progress.setVisible(False)

    def _build_labels(self) -> None:
        # one line, elided to the bar's width (the whole text in its tooltip): a long description
        # ("… 22.7 M parameters … 90.9 MB") made the page scroll sideways at 900 px (issue 40)
        self.info_label = ElidedLabel("No model loaded.")
        self.info_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.warning_label = _notice(lambda c: (c.warning_background, c.warning))
        self.error_label = _notice(lambda c: (c.error_background, c.error))  # why the last load failed, what to do
        self.error_label.setObjectName("modelError")
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def _lay_out(self) -> None:
        row = QHBoxLayout()
        row.addWidget(QLabel("Model:"))
        row.addWidget(self.source, 1)
        for widget in (self.open_button, self.device, self.dtype, self.load_button, self.cancel_button,
                       self.retry_cpu_button, self.progress):
            row.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        for label in (self.info_label, self.warning_label, self.error_label):
            layout.addWidget(label)

    @property
    def task(self) -> str:
        return self._task

    @task.setter
    def task(self, task: str) -> None:  # Evaluate changes it with its file's task: ONNX Runtime runs only some
        self._task = task
        self.offer_runtimes()

    # -- choices -------------------------------------------------------------------------
    def set_local_models(self, models: list) -> None:
        """List local folders, those whose weights support this task first."""
        text = self.source.currentText()
        chosen = self.source_text() if self.source.currentIndex() >= 0 else ""  # a listed folder, by path
        self.source.blockSignals(True)
        self.source.clear()
        ranked = sorted(models, key=lambda m: self.task not in m.tasks)
        for model in ranked:
            problem = getattr(model, "problem", "")
            if not getattr(model, "judged", True):
                mark = "  (checking its heads…)"  # listed from config.json; the weights are judged later
            elif self.task in model.tasks:
                mark = ""
            elif problem and not model.tasks:
                mark = f"  ({problem})"  # e.g. needs custom code, which BERT Studio never runs
            else:
                mark = f"  (no trained {self.task} head)"
            self.source.addItem(f"{model.name} — {model.architecture}{mark}", model.path)
            tasks = ", ".join(model.tasks) or (f"none: {problem}" if problem else "none") if getattr(
                model, "judged", True) else "being checked"
            note = getattr(model, "note", "")  # how its heads were judged, or what did not fit
            self.source.setItemData(self.source.count() - 1, f"{model.path}\ntasks: {tasks}"
                                    + (f"\nnote: {note}" if note else ""), Qt.ItemDataRole.ToolTipRole)
        # A listed folder chosen stays chosen under its new line (issue 40: "(checking its heads…)"
        # stayed in the field after its heads were judged, and the field then named no folder).
        listed = self.source.findData(chosen) if chosen else -1
        if listed >= 0:
            self.source.setCurrentIndex(listed)
        else:
            self.source.setEditText(text)
        self.source.blockSignals(False)

    def set_devices(self, devices: list[str], dtypes: dict[str, list[str]]) -> None:
        self._dtypes = dtypes
        current = self._settings.device or self.device.currentText()
        self.device.clear()
        self.device.addItems(devices)
        if current in devices:
            self.device.setCurrentText(current)
        self.offer_runtimes()

    def offer_runtimes(self) -> None:
        """"CPU (ONNX Runtime)" among the devices while the source has an exported model the task runs;
        taken away (back to the CPU) when it has none."""
        from bertstudio.core.export.onnx_runtime import has_export, runtime_tasks

        offered = self.device.findText(ONNX_CHOICE)
        wanted = self._onnx and self._task in runtime_tasks() and has_export(self.source_text())
        if wanted and offered < 0:
            self.device.addItem(ONNX_CHOICE)
            self.device.setItemData(self.device.count() - 1, "The folder's exported model.onnx, run by ONNX Runtime "
                                    "on the CPU (export it with File → Export model to ONNX…)",
                                    Qt.ItemDataRole.ToolTipRole)
        elif not wanted and offered >= 0:
            if self.device.currentIndex() == offered:
                self.device.setCurrentText("cpu")
            self.device.removeItem(offered)

    def _device_chosen(self, device: str) -> None:
        self.dtype.clear()
        if device == ONNX_CHOICE:  # the file runs as it was exported
            self.dtype.addItem("float32")
            return
        self.dtype.addItems(getattr(self, "_dtypes", {}).get(device, ["float32"]))
        if device.startswith("cpu"):
            self.dtype.addItem(INT8_CHOICE)

    def source_text(self) -> str:
        """The chosen source: a listed model's folder, or what the user typed."""
        return listed_or_typed(self.source)

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose a model folder", self._settings.models_dir)
        if folder:
            self.load(folder)

    # -- loading -------------------------------------------------------------------------
    def request(self, source: str | None = None) -> LoadRequest:
        onnx = self.device.currentText() == ONNX_CHOICE
        return LoadRequest(
            source=source if source is not None else self.source_text(),
            task=self.task,
            device="cpu" if onnx else self.device.currentText() or "cpu",
            dtype="float32" if self.dtype.currentText() == INT8_CHOICE else self.dtype.currentText() or "float32",
            attn_implementation=self.attn_implementation,
            quantize="int8" if self.dtype.currentText() == INT8_CHOICE else None,
            runtime="onnx" if onnx else "torch",
        )

    def load(self, source: str | None = None) -> None:
        if source:
            self.source.setEditText(source)
        self.retry_cpu_button.setVisible(False)
        self.error_label.setVisible(False)
        self._runner.start(load_job, self.request(source or None))

    def _retry_on_cpu(self) -> None:
        self.device.setCurrentText("cpu")
        self.load()

    def cancel(self) -> None:
        self._runner.cancel()

    @property
    def busy(self) -> bool:
        """True until the load's thread has really ended, Cancel or not."""
        return self._runner.busy

    def _on_stopping(self) -> None:
        self.cancel_button.setEnabled(False)
        self.info_label.setText("Cancelling…")

    def _on_cancelled(self) -> None:
        self.info_label.setText(describe_model(self.info) if self.info else "Loading cancelled.")
        if self.info is not None:
            self.info_label.setToolTip(self.info.folder)

    def _set_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self.cancel_button.setEnabled(busy)
        self.load_button.setEnabled(not busy)
        if busy:
            self.progress.setRange(0, 0)
            self.info_label.setText("Loading…")
        self.busy_changed.emit(busy)

    def _on_progress(self, event: ProgressEvent) -> None:
        show_fraction(self.progress, event.fraction)
        self.info_label.setText(event.message)

    def _on_loaded(self, info: ModelInfo) -> None:
        self.info = info
        self._settings.set_last_source(self.task, info.request.source)
        self._settings.set_device(info.request.device)
        self.info_label.setText(describe_model(info))
        self.info_label.setToolTip(info.folder)
        self.warning_label.setText(f"⚠ {info.head_warning}" if info.head_warning else "")
        self.warning_label.setVisible(bool(info.head_warning))
        self.error_label.setVisible(False)
        self.loaded.emit(info)

    def _on_error(self, error: BaseException) -> None:
        """The message and what to do, here in the bar (an offline Hub id asks for a local folder);
        the details go to the log panel with the `failed` signal."""
        message = getattr(error, "message", None) or str(error) or type(error).__name__
        if not isinstance(error, BertStudioError):
            message = f"Loading failed unexpectedly ({type(error).__name__}: {message})."
        hint = getattr(error, "hint", "")
        self.info_label.setText(describe_model(self.info) if self.info else "No model loaded.")
        self.error_label.setText(f"✖ {message}" + (f"\n{hint}" if hint else "")
                                 + ("\nThe loaded model above is unchanged." if self.info else ""))
        self.error_label.setToolTip("Details: View → Log → Details of the last error…")
        self.error_label.setVisible(True)
        self.retry_cpu_button.setVisible(isinstance(error, OutOfMemory))
        self.failed.emit(error)
