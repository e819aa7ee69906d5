"""The Train tab's cross-validation and label issues (issue 41): K-fold cross-validation of the form's
run in a worker (core/curation/crossval.py), the mean +- sd metrics, and the rows cleanlab flags
beside their text. One click relabels a row as suggested or drops it; "Write corrected copy and
re-run" writes `<file>-corrected.csv` beside the user's file (never over it) and cross-validates it
on the same folds, so the before/after metrics compare like with like."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSpinBox, QWidget

from bertstudio.core.curation.crossval import CrossValidation
from bertstudio.core.curation.label_issues import LabelIssue
from bertstudio.core.progress import ProgressEvent, TaskControl
from bertstudio.core.training.config import TrainConfig
from bertstudio.ui.train.panel import TrainPanel, new_table
from bertstudio.ui.widgets.forms import set_cells

DROP = None  # a pending change that removes the row
COLUMNS = ("Row", "Text", "Given", "Suggested", "Self-confidence", "Change", "", "")


@dataclass(frozen=True)
class Curated:
    """A cross-validation and what the window shows of it."""

    cv: CrossValidation
    issues: tuple[LabelIssue, ...]
    texts: tuple[str, ...]
    train_file: str
    label_column: str


def cv_job(config: TrainConfig, k: int, assignments: tuple[int, ...] | None, stop_event: threading.Event,
           control: TaskControl) -> Curated:
    """Cross-validate (on given folds when re-running a corrected copy), then cleanlab's label issues."""
    from bertstudio.core.curation.crossval import cross_validate
    from bertstudio.core.curation.cv_card import write_cv_card
    from bertstudio.core.curation.label_issues import find_issues
    from bertstudio.core.curation.oof import read_oof
    from bertstudio.core.training.data import read_labelled

    folds = np.asarray(assignments) if assignments is not None else None
    cv = cross_validate(config, k, control, stop_event=stop_event, assignments=folds)
    found = read_oof(cv.oof_file)
    data = read_labelled(config.train_file, config.columns, multi_label=config.multi_label)
    issues = find_issues(found.given, found.probabilities, found.classes, config.multi_label)
    write_cv_card(config, data, found.classes, cv, issues)
    return Curated(cv, tuple(issues), data.texts, config.train_file, data.columns.label)


def describe(cv: CrossValidation) -> str:
    return ", ".join(f"{name} {cv.mean[name]:.3f} ± {cv.sd[name]:.3f}" for name in cv.mean)


class CurationPanel(TrainPanel):
    """K, Run/Cancel, progress, metrics (before -> after), the suspected rows and their fixes."""

    cv_ended = Signal()

    def __init__(self, config_source: Callable[[], TrainConfig], show_message: Callable[..., None],
                 parent: QWidget | None = None) -> None:
        super().__init__("Cross-validation and label issues",
                         "K-fold cross-validation; cleanlab lists the rows whose label looks wrong",
                         config_source, show_message, parent)
        self.result: Curated | None = None
        self.before: Curated | None = None  # the run the corrected copy is compared with
        self.changes: dict[int, str | None] = {}  # data row -> new label, or DROP
        self.folds = QSpinBox()
        self.folds.setRange(2, 20)
        self.folds.setValue(5)
        self.folds.setPrefix("K = ")
        self.run_button, self.cancel_button = QPushButton("Cross-validate"), QPushButton("Cancel")
        self.while_running(self.run_button, self.cancel_button)
        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.table = new_table(COLUMNS, 120)
        self.write_button = QPushButton("Write corrected copy and re-run")
        self.write_button.setToolTip("A copy beside your file (name-corrected.csv; never over it), "
                                     "cross-validated on the same folds")
        self.write_button.setEnabled(False)
        self.write_button.clicked.connect(self.write_and_rerun)
        controls = QHBoxLayout()
        for widget in (self.folds, self.run_button, self.cancel_button):
            controls.addWidget(widget)
        controls.addWidget(self.progress, 1)
        self.lay_out(controls, self.summary, self.table, self.write_button, cancelled="Cross-validation cancelled.")
        self.runner.progress.connect(self.on_progress)
        self.runner.result.connect(self.on_result)
        self.runner.finished.connect(self._on_finished)

    # -- running ---------------------------------------------------------------------------
    def start(self, config: TrainConfig | None = None, assignments: tuple[int, ...] | None = None) -> None:
        checked = self.checked_config(lambda: config or self._cv_config(self.config_source(), "cv"))
        if checked is None:
            return
        if assignments is None:
            self.before = None
        self.progress.setValue(0)
        self._stop_event = threading.Event()
        self.runner.start(cv_job, checked, self.folds.value(), assignments, self._stop_event)
        self.write_button.setEnabled(False)

    @staticmethod
    def _cv_config(config: TrainConfig, word: str) -> TrainConfig:
        """The form's run, written to `<output>-<word>` (ours to replace on the next run)."""
        output = config.output_dir.rstrip("/\\")
        return replace(config, output_dir=f"{output}-{word}" if output else "", overwrite=True)

    def cancel(self) -> None:
        self._stop_event.set()
        self.runner.cancel()

    def on_progress(self, event: ProgressEvent) -> None:
        if event.message.startswith("Fold ") and event.fraction is not None:
            self.progress.setValue(int(1000 * event.fraction))
            self.progress.setFormat(event.message[:60])

    def on_result(self, result: Curated) -> None:
        self.result, self.changes = result, {}
        self.show_done()
        text = f"{len(result.cv.folds)} folds: {describe(result.cv)}. {len(result.issues)} row(s) look mislabelled."
        if self.before is not None:
            text = f"Before: {describe(self.before.cv)}.\nAfter (same folds): {text}"
        self.summary.setText(text)
        self.fill_table(result)

    def fill_table(self, result: Curated) -> None:
        self.table.setRowCount(len(result.issues))
        for line, issue in enumerate(result.issues):
            set_cells(self.table, line, (str(issue.row), result.texts[issue.row], issue.given, issue.suggested,
                                         f"{issue.self_confidence:.3f}", ""))
            relabel, drop = QPushButton(f"→ {issue.suggested}"), QPushButton("Drop")
            relabel.setToolTip("Relabel this row as the model suggests (click again to undo)")
            relabel.clicked.connect(lambda _c=False, row=issue.row, to=issue.suggested: self.set_change(row, to))
            drop.clicked.connect(lambda _c=False, row=issue.row: self.set_change(row, DROP))
            self.table.setCellWidget(line, 6, relabel)
            self.table.setCellWidget(line, 7, drop)
        self.table.resizeColumnsToContents()
        self.table.setColumnWidth(1, min(self.table.columnWidth(1), 320))

    def set_change(self, row: int, label: str | None) -> None:
        """Toggle one row's fix: the same click again undoes it."""
        if row in self.changes and self.changes[row] == label:
            del self.changes[row]
        else:
            self.changes[row] = label
        if self.result is not None:
            for line, issue in enumerate(self.result.issues):
                change = self.changes.get(issue.row, "") if issue.row in self.changes else ""
                shown = "dropped" if issue.row in self.changes and change is DROP else (f"→ {change}" if change else "")
                item = self.table.item(line, 5)
                if item is not None:
                    item.setText(shown)
            self.table.resizeColumnToContents(5)
        self.write_button.setEnabled(bool(self.changes) and not self.runner.busy)

    def write_and_rerun(self) -> None:
        """The corrected copy beside the user's file, then the same folds on it (minus dropped rows)."""
        from bertstudio.core.curation.copies import corrected_copy
        from bertstudio.core.errors import BertStudioError

        if self.result is None or not self.changes:
            return
        relabel = {row: label for row, label in self.changes.items() if label is not None}
        dropped = sorted(row for row, label in self.changes.items() if label is None)
        try:
            path = corrected_copy(self.result.train_file, self.result.label_column, relabel, dropped)
        except BertStudioError as error:
            self.refuse(error)
            return
        self.show_message(f"Wrote {path} ({len(relabel)} relabelled, {len(dropped)} dropped); cross-validating it "
                          "on the same folds…")
        kept = [fold for row, fold in enumerate(self.result.cv.assignments) if row not in set(dropped)]
        self.before = self.result
        base = replace(self.config_source(), train_file=str(Path(path)))
        self.start(self._cv_config(base, "cv-corrected"), tuple(kept))

    def _on_finished(self) -> None:
        self.write_button.setEnabled(bool(self.changes))
        self.cv_ended.emit()
