"""The Runs page: every recorded training run (core/runs), its curves overlaid with others' on
shared axes, the settings two runs differ in, its model opened in a tab or in Evaluate, and
Delete, which asks first and removes only folders BERT Studio made (core/runs/delete.py).

The index is read in a worker (a long history is many files), when the page is first shown and
whenever a training run ends (ui/wiring.py); deleting runs in a worker too (a model folder can be
gigabytes). The table keeps the selection by run id across a refresh.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QMenu,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
)

from bertstudio.core.progress import TaskControl
from bertstudio.core.runs import index
from bertstudio.ui.tabs.frame import StudioTab
from bertstudio.ui.train.result_panel import open_targets
from bertstudio.ui.widgets.elided_label import ElidedLabel
from bertstudio.ui.widgets.run_curves import RunCurves
from bertstudio.workers.runner import TaskRunner

COLUMNS = ("Started", "Status", "Task", "Base model", "Result", "Duration", "Device", "Steps", "Output folder")
HEADLINE = ("accuracy", "f1", "exact_match", "pearson", "spearman", "loss")


def list_job(control: TaskControl) -> list[index.RunRecord]:
    """The runs index, newest first (worker thread)."""
    control.report("Reading the runs index…")
    return index.list_runs()


def delete_job(runs: list[index.RunRecord], others: list[index.RunRecord], control: TaskControl) -> str:
    """Delete each run's own folders and record (worker thread); one line saying what happened."""
    from bertstudio.core.runs.delete import delete_run

    messages = []
    for run in runs:
        control.report(f"Deleting the run of {run.started}…")
        messages.append(delete_run(run, others).message())
    return " ".join(messages)


def headline(run: index.RunRecord) -> str:
    if run.status == "failed":
        return run.error
    for name in HEADLINE:
        if f"eval_{name}" in run.metrics:
            return f"{name} {run.metrics[f'eval_{name}']:.4f}"
    return f"train loss {run.metrics['train_loss']:.4f}" if "train_loss" in run.metrics else ""


def duration_text(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s"


class RunsTab(StudioTab):
    TASK = "runs"  # the window's and workspace's key for this page (not a task)
    TITLE = "Runs"
    ORDER = 97  # last: after Train, Evaluate and Tests

    open_model_requested = Signal(str, str)  # (task key, model folder): ui/wiring.py opens it there
    can_open: Callable[[str], bool] = staticmethod(lambda _key: True)  # ui/wiring.py: tabs this build has

    def build(self) -> None:
        self.runs: list[index.RunRecord] = []
        self._stale = True  # the index is read when the page is shown, not while hidden
        self._note = ""  # what the last delete did: shown with the list read after it
        self.delete_runner = TaskRunner(self)  # never superseded by a refresh
        self.runner.result.connect(self._show_runs)
        self.delete_runner.result.connect(self._deleted)
        self.delete_runner.error.connect(self._on_error)
        self.delete_runner.finished.connect(self._update_buttons)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("Read the runs index again")
        self.refresh_button.clicked.connect(self.refresh_runs)
        self.where = ElidedLabel("")
        top = QHBoxLayout()
        top.addWidget(self.refresh_button)
        top.addWidget(self.where, 1)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setMinimumHeight(150)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.open_button = QToolButton()
        self.open_button.setText("Open in…")
        self.open_button.setToolTip("Load the selected run's model in a tab")
        self.open_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.open_menu = QMenu(self.open_button)
        self.open_button.setMenu(self.open_menu)
        self.evaluate_button = QPushButton("Evaluate…")
        self.evaluate_button.setToolTip("Score the selected run's model on its validation (else training) file")
        self.evaluate_button.clicked.connect(self.evaluate_selected)
        self.delete_button = QPushButton("Delete…")
        self.delete_button.setToolTip("Delete the selected runs: their record, and the folders BERT Studio made "
                                      "for them (asks first; other folders are never touched)")
        self.delete_button.clicked.connect(self.delete_selected)
        actions = QHBoxLayout()
        for button in (self.open_button, self.evaluate_button, self.delete_button):
            actions.addWidget(button)
        actions.addStretch(1)
        self.curves = RunCurves()
        self.curves.setMinimumHeight(560)  # three readable plots; the page scrolls in a small window
        self.diff_label = ElidedLabel("")
        self.diff_table = QTableWidget(0, 3)
        self.diff_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.diff_table.verticalHeader().setVisible(False)
        self.diff_table.horizontalHeader().setStretchLastSection(True)
        self.diff_table.setMinimumHeight(120)
        for part in (top, self.table, actions, self.curves, self.diff_label, self.diff_table):
            if isinstance(part, QHBoxLayout):
                self.body.addLayout(part)
            else:
                self.body.addWidget(part)
        self._selection_changed()

    # -- reading the index ----------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if self._stale:
            self.refresh_runs()

    def refresh_runs(self) -> None:
        """Read the index again now if the page is shown, else when it is next shown."""
        self._stale = True
        if self.isVisible():
            self._stale = False
            self.runner.start(list_job)

    def _show_runs(self, runs: list[index.RunRecord]) -> None:
        chosen = {run.id for run in self.selected_runs()}
        self.runs = list(runs)
        self.where.setText(f"{len(runs)} run{'s' if len(runs) != 1 else ''} recorded in {index.runs_dir()}")
        self.table.blockSignals(True)
        self.table.clearSelection()
        self.table.setRowCount(len(runs))
        later = index.resumed_later(self.runs)
        for row, run in enumerate(runs):
            steps = f"{run.step} / {run.max_steps}" if run.max_steps else ""
            status = f"{run.status}, resumed later" if run.id in later else run.status
            cells = (run.started.replace("T", " "), status, run.task, f"{run.model} ({index.training_kind(run)})",
                     headline(run), duration_text(run.duration_seconds), run.device, steps, run.output_dir)
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text if run.id not in later or column != 1 else
                                "Resumed by a later run into the same folder: the folder now holds that run's model")
                item.setData(Qt.ItemDataRole.UserRole, run.id)
                self.table.setItem(row, column, item)
        self.table.resizeColumnsToContents()
        for column in range(len(COLUMNS)):
            self.table.setColumnWidth(column, min(self.table.columnWidth(column), 260))
        for row, run in enumerate(runs):
            if run.id in chosen:
                self._add_row(row)
        self.table.blockSignals(False)
        self._selection_changed()
        if self._note:
            self.show_message(self._note)
            self._note = ""

    def _add_row(self, row: int) -> None:
        from PySide6.QtCore import QItemSelectionModel

        model = self.table.selectionModel()
        model.select(self.table.model().index(row, 0),
                     QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)

    def selected_runs(self) -> list[index.RunRecord]:
        """The selected runs in table order (newest first)."""
        rows = sorted({index_.row() for index_ in self.table.selectionModel().selectedRows()})
        return [self.runs[row] for row in rows if row < len(self.runs)]

    def select_runs(self, ids: list[str]) -> None:
        """Select these runs (for hand-offs and tests)."""
        self.table.clearSelection()
        for row, run in enumerate(self.runs):
            if run.id in ids:
                self._add_row(row)

    # -- what the selection shows --------------------------------------------------------------
    def _selection_changed(self) -> None:
        runs = self.selected_runs()
        self.curves.show_runs(runs)
        self._show_diff(runs)
        self._update_buttons()

    def _show_diff(self, runs: list[index.RunRecord]) -> None:
        from bertstudio.core.runs.diff import run_diff

        self.diff_table.setRowCount(0)
        if len(runs) != 2:
            self.diff_label.setText("Select two runs to see the settings they differ in.")
            self.diff_table.setVisible(False)
            return
        first, second = runs[1], runs[0]  # the older run first
        differences = run_diff(first, second)
        when = first.started.replace("T", " "), second.started.replace("T", " ")
        count = "1 setting differs" if len(differences) == 1 else f"{len(differences)} settings differ"
        self.diff_label.setText(f"{count} between the run of {when[0]} and the run of {when[1]}."
                                if differences else "The two runs have the same settings and data.")
        self.diff_table.setHorizontalHeaderLabels(["Setting", *when])
        self.diff_table.setRowCount(len(differences))
        for row, difference in enumerate(differences):
            for column, text in enumerate((difference.key, difference.first, difference.second)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.diff_table.setItem(row, column, item)
        self.diff_table.resizeColumnsToContents()
        self.diff_table.setVisible(bool(differences))

    def _openable(self) -> index.RunRecord | None:
        """The one selected run, if it saved a model that is still there."""
        runs = self.selected_runs()
        if len(runs) != 1 or not runs[0].open_in or not Path(runs[0].output_dir).is_dir():
            return None
        return runs[0]

    def _update_buttons(self) -> None:
        run = self._openable()
        self.open_menu.clear()
        labels = open_targets()
        for key in run.open_in if run is not None else ():
            if key in labels and self.can_open(key):
                action = self.open_menu.addAction(labels[key])
                action.triggered.connect(lambda _checked=False, k=key: self.open_selected_in(k))
        self.open_button.setEnabled(bool(self.open_menu.actions()))
        self.evaluate_button.setEnabled(run is not None and hasattr(self.window(), "open_evaluation"))
        self.delete_button.setEnabled(bool(self.selected_runs()) and not self.delete_runner.busy)

    # -- actions --------------------------------------------------------------------------------
    def open_selected_in(self, task: str) -> None:
        """The selected run's model in that task's tab (reached through ui/wiring.py)."""
        run = self._openable()
        if run is not None:
            self.open_model_requested.emit(task, run.output_dir)

    def evaluate_selected(self) -> None:
        """The selected run's model on its validation file (else its training file) in Evaluate."""
        run = self._openable()
        window = self.window()
        if run is None or not hasattr(window, "open_evaluation"):
            return
        data = str(run.config.get("eval_file") or run.config.get("train_file") or "")
        window.open_evaluation(run.output_dir, data, run.open_in[0])

    def confirm(self, title: str, text: str) -> bool:
        """Ask before deleting (tests replace this)."""
        answer = QMessageBox.question(self, title, text, QMessageBox.StandardButton.Yes
                                      | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Cancel)
        return answer == QMessageBox.StandardButton.Yes

    def delete_selected(self) -> None:
        """Ask, naming every folder that would go (and any kept), then delete in the background."""
        from bertstudio.core.runs.delete import planned

        runs = self.selected_runs()
        if not runs or self.delete_runner.busy:
            return
        folders: list[str] = []
        kept: list[str] = []
        for run in runs:
            remove, keep = planned(run, self.runs)
            folders += [str(path) for path in remove]
            kept += keep
        text = (f"Delete {len(runs)} run{'s' if len(runs) != 1 else ''} from the history"
                + (" and these folders:\n" + "\n".join(folders) if folders else " (no folder is deleted)") + "?"
                + ("\n\nKept: " + "; ".join(kept) if kept else ""))
        if not self.confirm("Delete runs", text):
            return
        self.delete_button.setEnabled(False)
        self.delete_runner.start(delete_job, runs, list(self.runs))

    def _deleted(self, message: str) -> None:
        self._note = message  # shown once the list is read again (a new read clears the notes)
        self.status.emit(f"Runs: {message}")
        self.refresh_runs()
