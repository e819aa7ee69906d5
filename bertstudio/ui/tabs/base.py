"""What every task tab has: a model bar, a runner for its work, and one place to show messages.

A tab declares what it needs (`TASK`, `TITLE`, `ATTN_IMPLEMENTATION`) the way spyder plugins
declare NAME/REQUIRES; the window builds tabs from the registry in `tabs/__init__.py`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.ui.local_models import LocalModelsIndex
from bertstudio.ui.model_bar import ModelBar
from bertstudio.ui.settings import AppSettings
from bertstudio.workers.runner import TaskRunner


class TaskTab(QWidget):
    TASK: ClassVar[str]
    TITLE: ClassVar[str]
    ORDER: ClassVar[int] = 100  # position among the tabs, smaller first
    ATTN_IMPLEMENTATION: ClassVar[str | None] = None

    status = Signal(str)  # a short line for the status bar
    failed = Signal(object)  # an exception for the status bar and the log panel

    def __init__(self, settings: AppSettings, index: LocalModelsIndex, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.model_bar = ModelBar(self.TASK, settings, index, self.ATTN_IMPLEMENTATION, self)
        self.runner = TaskRunner(self)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setVisible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.model_bar)
        self.body = QVBoxLayout()
        layout.addLayout(self.body, 1)
        layout.addWidget(self.message)
        self.model_bar.loaded.connect(self._on_model_loaded)
        self.model_bar.failed.connect(self.failed)
        self.runner.error.connect(self._on_error)
        self.runner.started.connect(self.clear_message)
        self.build()

    # -- for subclasses ----------------------------------------------------------------------
    def build(self) -> None:
        """Add the tab's widgets to `self.body`."""
        raise NotImplementedError

    def model_loaded(self, info: ModelInfo) -> None:
        """React to a newly loaded model (enable buttons, insert its mask token...)."""

    @property
    def model_info(self) -> ModelInfo | None:
        return self.model_bar.info

    def model_request(self) -> LoadRequest | None:
        info = self.model_bar.info
        return info.request if info is not None else None

    def run_job(self, func: Any, *args: Any, **kwargs: Any) -> bool:
        """Run `func(request, *args, control=...)` on the loaded model; False if none is loaded."""
        request = self.model_request()
        if request is None:
            self.show_message("Load a model first.", error=True)
            return False
        self.runner.start(func, request, *args, **kwargs)
        return True

    # -- messages --------------------------------------------------------------------------
    def show_message(self, text: str, error: bool = False) -> None:
        colour = "#a40000" if error else "#5c4400"
        self.message.setStyleSheet(f"QLabel {{ color: {colour}; }}")
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def clear_message(self) -> None:
        self.show_message("")

    def _on_error(self, error: BaseException) -> None:
        text = getattr(error, "message", None) or str(error)
        hint = getattr(error, "hint", "")
        self.show_message(f"{text} {hint}".strip(), error=True)
        self.failed.emit(error)

    def _on_model_loaded(self, info: ModelInfo) -> None:
        self.status.emit(f"{self.TITLE}: loaded {info.architecture} from {info.request.source}")
        self.model_loaded(info)

    def open_model(self, source: str) -> None:
        """Load `source` here (used by "Open in…" after training)."""
        self.model_bar.load(source)
