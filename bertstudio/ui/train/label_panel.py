"""The Train tab's labelling table (active learning, issue 41): the pool rows the trained model is
least sure of (core/curation/active_learning.py, scored through the batch engine in a worker), or
rows sent from elsewhere (the Tests tab's failures), each labelled with a combo; "Append to a copy
and retrain" writes `<file>-labelled.csv` beside the training file (never over it), points the form
at it and starts training."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from bertstudio.core.curation.active_learning import STRATEGIES, Chosen, select
from bertstudio.core.training.config import TrainConfig
from bertstudio.ui.train.panel import TrainPanel, new_table
from bertstudio.ui.widgets.forms import set_cells

SKIP = "(not labelled)"


@dataclass(frozen=True)
class ToLabel:
    """A row waiting for a label: its text, a proposed label (may be empty) and where it came from."""

    text: str
    proposed: str = ""
    origin: str = ""
    score: float | None = None


class LabelPanel(TrainPanel):
    """Pool, count, strategy, "Choose rows"; the table of rows to label; append and retrain."""

    def __init__(self, config_source: Callable[[], TrainConfig], model_source: Callable[[], str],
                 retrain: Callable[[str], None], show_message: Callable[..., None],
                 parent: QWidget | None = None) -> None:
        super().__init__("Label next (active learning)", "", config_source, show_message, parent)
        self.model_source, self.retrain = model_source, retrain
        self.rows: list[ToLabel] = []
        self.pool = QLineEdit()
        self.pool.setPlaceholderText("unlabelled texts (CSV/TSV/JSONL with a text column)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        self.count = QSpinBox()
        self.count.setRange(1, 1000)
        self.count.setValue(20)
        self.count.setPrefix("N = ")
        self.strategy = QComboBox()
        self.strategy.addItems(STRATEGIES)
        self.choose_button = QPushButton("Choose rows")
        self.choose_button.setToolTip("The pool rows the trained model (the output folder) is least sure of")
        self.choose_button.clicked.connect(self.choose)
        self.table = new_table(["Text", "Score", "From", "Label"], 120)
        self.append_button = QPushButton("Append to a copy and retrain")
        self.append_button.setToolTip("Writes <training file>-labelled.csv beside it (never over it) and trains on it")
        self.append_button.clicked.connect(self.append_and_retrain)
        pool_row, run_row = QHBoxLayout(), QHBoxLayout()
        pool_row.addWidget(self.pool, 1)
        pool_row.addWidget(browse)
        for widget in (self.count, self.strategy, self.choose_button):
            run_row.addWidget(widget)
        run_row.addWidget(self.progress, 1)
        self.lay_out(pool_row, run_row, self.table, self.append_button)
        self.runner.progress.connect(self.show_fraction)
        self.runner.result.connect(self._on_chosen)
        self.runner.finished.connect(lambda: self.choose_button.setEnabled(True))

    def _browse(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(self, "Pool of unlabelled texts", "",
                                                    "Tables (*.csv *.tsv *.jsonl);;All files (*)")
        if path:
            self.pool.setText(path)

    def choose(self) -> None:
        model, pool = self.model_source(), self.pool.text().strip()
        if not model or not pool:
            self.show_message("Choose a pool file and train a model first (its output folder scores the pool).",
                              error=True)
            return
        self.progress.setValue(0)
        self.choose_button.setEnabled(False)
        self.runner.start(select, model, pool, self.count.value(), self.strategy.currentText())

    def _on_chosen(self, chosen: list[Chosen]) -> None:
        self.progress.setValue(1000)
        self.add_rows([ToLabel(c.text, "", f"pool row {c.row}", c.score) for c in chosen], replace=True)

    def classes(self) -> list[str]:
        """The training file's labels: what a row may be labelled as."""
        from bertstudio.core.errors import BertStudioError
        from bertstudio.core.training.data import read_labelled

        try:
            config = self.config_source()
            return sorted(set(read_labelled(config.train_file, config.columns).labels))
        except (BertStudioError, OSError):
            return []

    def add_rows(self, rows: Sequence[ToLabel], replace: bool = False) -> None:
        """Rows to label (a pool's chosen rows, or the Tests tab's failures with their expected label)."""
        self.toggle.setChecked(True)
        self.rows = [*([] if replace else self.rows), *rows]
        classes = self.classes()
        self.table.setRowCount(len(self.rows))
        for line, row in enumerate(self.rows):
            set_cells(self.table, line, (row.text, "" if row.score is None else f"{row.score:.4f}", row.origin))
            combo = QComboBox()
            combo.addItems([SKIP, *classes, *([row.proposed] if row.proposed and row.proposed not in classes else [])])
            if row.proposed:
                combo.setCurrentText(row.proposed)
            self.table.setCellWidget(line, 3, combo)
        self.table.resizeColumnsToContents()
        self.table.setColumnWidth(0, min(self.table.columnWidth(0), 360))

    def labelled(self) -> list[tuple[str, str]]:
        out = []
        for line, row in enumerate(self.rows):
            combo = self.table.cellWidget(line, 3)
            if isinstance(combo, QComboBox) and combo.currentText() != SKIP:
                out.append((row.text, combo.currentText()))
        return out

    def append_and_retrain(self) -> None:
        from bertstudio.core.curation.copies import appended_copy
        from bertstudio.core.errors import BertStudioError
        from bertstudio.core.training.data import read_labelled

        labelled = self.labelled()
        if not labelled:
            self.show_message("Label at least one row first.", error=True)
            return
        try:
            config = self.config_source()
            columns = read_labelled(config.train_file, config.columns).columns
            path = appended_copy(config.train_file, columns.text, columns.label, labelled)
        except BertStudioError as error:
            self.refuse(error)
            return
        self.show_message(f"Wrote {path} ({len(labelled)} new rows); training on it…")
        done = {text for text, _label in labelled}
        self.add_rows([row for row in self.rows if row.text not in done], replace=True)
        self.retrain(str(path))
