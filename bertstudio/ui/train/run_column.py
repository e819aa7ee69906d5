"""The Train tab's right-hand column: the plan line and plots, Start / Stop / Resume and Export PNG, the
progress bar and the rate line on rows of their own, the notes; the tab adds its panels and the shown
run's record below (`add`)."""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from bertstudio.ui.screen_fit import keep_room
from bertstudio.ui.settings import AppSettings
from bertstudio.ui.train.live import LiveRun

PROGRESS_MIN_WIDTH = 160  # pixels: room for "step 1234 / 5678" beside the bar's fill


class RunColumn(QWidget):
    def __init__(self, live: LiveRun, notes: QWidget, settings: AppSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.live, self.settings = live, settings
        self.start_button = QPushButton("Start")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop after the current step (or evaluation batch) and save what was trained")
        # Resume is an action, not a setting: a ticked box stayed ticked after the resume, below the
        # visible form, and the next run into a new folder failed with "no checkpoint to resume".
        self.resume_button = QPushButton("Resume")
        self.resume_button.setToolTip("Continue the run saved in the output folder from its last checkpoint "
                                      "(same task, base model and labels)")
        self.show_running(False)
        self.export_button = QPushButton("Export PNG…")
        self.export_button.clicked.connect(self._export)
        controls, status = QHBoxLayout(), QVBoxLayout()
        for widget in (self.start_button, self.stop_button, self.resume_button):
            controls.addWidget(widget)
        controls.addStretch(1)
        controls.addWidget(self.export_button)
        # Rows of their own: the bar's text ("step 12 / 45") and the rate with a run's longest ETA
        # ("123.4 samples/s  ETA 1:12:01") are never squeezed to "Trainin…" / "ETA 0:…", even at 900x600
        live.progress.setMinimumWidth(PROGRESS_MIN_WIDTH)
        status.setSpacing(2)
        status.addWidget(live.progress)
        status.addWidget(live.rate_label)
        self.column = QVBoxLayout(self)
        self.column.setContentsMargins(0, 0, 0, 0)
        self.column.addWidget(live.plan_label)
        self.column.addWidget(live.plots, 1)
        self.column.addWidget(live.teacher_plot)
        self.column.addLayout(controls)
        self.column.addLayout(status)
        self.column.addWidget(keep_room(notes))

    def add(self, *widgets: QWidget) -> None:
        for widget in widgets:
            self.column.addWidget(widget)

    def show_running(self, running: bool) -> None:
        """Stop while a run goes; Start and Resume when none does."""
        self.start_button.setEnabled(not running)
        self.resume_button.setEnabled(not running)
        self.stop_button.setEnabled(running)

    def _export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export plots", self.settings.save_path("training.png"),
                                              "PNG image (*.png)")
        self.settings.remember_save(path)
        if path:
            self.live.plots.export_png(path)
