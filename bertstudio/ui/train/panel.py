"""What the Train page's four panels (search, learning-rate finder, cross-validation, labelling) share:
a header button over a body that starts collapsed (the page stays short until the user opens one), a
worker and a 0-1000 progress bar of their own, the form's run checked before a job starts, and the
worker's errors and Cancel said beside their buttons (and refusals in the Log)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from PySide6.QtWidgets import QLayout, QProgressBar, QTableWidget, QToolButton, QVBoxLayout, QWidget

from bertstudio.core.errors import BertStudioError
from bertstudio.core.progress import ProgressEvent
from bertstudio.core.training.config import TrainConfig
from bertstudio.workers.runner import TaskRunner


def new_table(headers: Sequence[str], min_height: int) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(list(headers))
    table.setMinimumHeight(min_height)
    return table


class TrainPanel(QWidget):
    """`toggle` over `body`; `runner`, `progress`; `show_message` goes to the tab's notes unless overridden."""

    def __init__(self, title: str, tip: str, config_source: Callable[[], TrainConfig],
                 show_message: Callable[..., None] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.config_source, self._tell = config_source, show_message
        self._stop_event = threading.Event()
        self.runner = TaskRunner(self)
        self.toggle = QToolButton()
        self.toggle.setText(title)
        self.toggle.setCheckable(True)
        self.toggle.setToolTip(tip)
        self.body = QWidget()
        self.toggle.toggled.connect(self.body.setVisible)
        self.body.setVisible(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)

    def lay_out(self, *parts: QWidget | QLayout, cancelled: str = "") -> None:
        """The header over the body holding `parts` top to bottom; the worker's error and Cancel said
        through `show_message` as it is when they come."""
        inner = QVBoxLayout(self.body)
        inner.setContentsMargins(0, 0, 0, 0)
        for part in parts:
            if isinstance(part, QLayout):
                inner.addLayout(part)
            else:
                inner.addWidget(part)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.toggle)
        outer.addWidget(self.body)
        self.runner.error.connect(lambda error: self.show_message(getattr(error, "message", str(error)), error=True))
        if cancelled:
            self.runner.cancelled.connect(lambda: self.show_message(cancelled))

    def while_running(self, start: QWidget, stop: QWidget) -> None:
        """`start` off and `stop` on while the worker runs; the other way round before and after."""
        def running(on: bool) -> None:
            start.setEnabled(not on)
            stop.setEnabled(on)

        running(False)
        self.runner.started.connect(lambda: running(True))
        self.runner.finished.connect(lambda: running(False))

    def show_message(self, text: str, error: bool = False) -> None:
        if self._tell is not None:
            self._tell(text, error=error)

    def refuse(self, error: BertStudioError) -> None:
        self.show_message(f"{error.message} {error.hint}".strip(), error=True)

    def checked_config(self, make: Callable[[], TrainConfig] | None = None) -> TrainConfig | None:
        """The run `make` gives (default: the form's) if it validates; None after saying why not."""
        try:
            config = (make or self.config_source)()
            config.validate()
        except BertStudioError as error:
            self.refuse(error)
            return None
        return config

    def is_running(self) -> bool:
        return self.runner.busy

    def show_fraction(self, event: ProgressEvent) -> None:
        if event.fraction is not None:
            self.progress.setValue(int(1000 * event.fraction))

    def show_done(self, text: str = "done") -> None:
        self.progress.setValue(1000)
        self.progress.setFormat(text)
