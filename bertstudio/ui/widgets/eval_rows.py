"""The Evaluate view's Rows page: the row browser, and below it two tools on the selected rows:
explain them together (mean |attribution| per token over the selection) and list a row's nearest
rows in the file (cosine of mean-pooled embeddings).

Each tool runs its core job (`core.evaluate.jobs`) on its own runner with progress and Cancel;
a new evaluation (`set_context`) cancels them and drops what they showed.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QLabel,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTabWidget,
    QWidget,
)

from bertstudio.ui.widgets.elided_label import ElidedLabel
from bertstudio.ui.widgets.eval_results import RowsBrowser
from bertstudio.ui.widgets.eval_tables import RecordsView
from bertstudio.ui.widgets.layouts import bar_above, row, splitter
from bertstudio.ui.widgets.ranked_bars import RankedBars
from bertstudio.workers.runner import TaskRunner

SHOWN_TOKENS = 20  # bars; the table beside lists every token
NEIGHBOUR_HEADERS = ("row", "cosine", "gold", "prediction", "correct", "text")


class ExplainRowsPanel(QWidget):
    """Method picker, Explain and Cancel; the pooled tokens as ranked bars and a table with counts."""

    def __init__(self, parent: QWidget | None = None) -> None:
        from bertstudio.core.limits import MAX_EXPLAIN_ROWS

        super().__init__(parent)
        self.method = QComboBox()
        for value, text in (("grad-x-input", "gradient × input (fast)"), ("gradient", "gradient"),
                            ("integrated-gradients", "integrated gradients (slow)")):
            self.method.addItem(text, value)
        self.method.setToolTip("The attribution method used for every selected row")
        self.share = QCheckBox("Rows weigh the same")
        self.share.setToolTip("Divide each row's |attributions| by their sum first: a row near the decision "
                              "boundary (large gradients) counts no more than the others")
        self.explain_button = QPushButton("Explain selected rows")
        self.explain_button.setToolTip(f"Up to {MAX_EXPLAIN_ROWS} rows; each row's predicted class is explained")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.status = ElidedLabel(f"Select rows above (at most {MAX_EXPLAIN_ROWS}), then Explain.")
        self.bars = RankedBars(value_format="{:.3g}", probability=False)
        self.bars.getPlotItem().getAxis("bottom").setLabel("mean |attribution|")
        self.bars.empty_text = "Select rows above and press Explain: their most important tokens show here."
        self.bars.set_items([], [])  # no axes until there are tokens (an empty 0.1..1.1 scale said nothing)
        self.share.toggled.connect(lambda on: self.bars.getPlotItem().getAxis("bottom").setLabel(
            "mean share of the row's |attribution|" if on else "mean |attribution|"))
        self.table = RecordsView(("token", "mean |attribution|", "occurrences", "rows"), stretch=0)
        scroll = QScrollArea()  # 20 bars want more height than the page has: they scroll
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.bars)
        bar = row(QLabel("Method:"), self.method, self.share, self.explain_button, self.cancel_button, self.status)
        bar_above(self, bar, splitter(Qt.Orientation.Horizontal, scroll, self.table, sizes=(560, 340)), top=4)

    def show_explanation(self, found: Any) -> None:
        top = found.tokens[:SHOWN_TOKENS]
        self.bars.set_items([t.token for t in top], [t.mean_abs for t in top],
                            [f"{t.token}: {t.count} occurrence(s) in {t.rows} row(s)" for t in top])
        value = "mean share of |attribution|" if found.share else "mean |attribution|"
        self.table.set_records([(t.token, t.mean_abs, t.count, t.rows) for t in found.tokens],
                               headers=("token", value, "occurrences", "rows"))
        weighed = ", each row weighing the same" if found.share else ""
        self.status.setText(f"{len(found.rows)} rows, {found.method}{weighed}, {len(found.tokens)} distinct "
                            f"tokens (specials left out), {found.seconds:.1f} s")

    def clear(self) -> None:
        self.bars.set_items([], [])
        self.table.source_model.clear()


class NeighboursPanel(QWidget):
    """How many, Find and Cancel; the nearest rows with their cosine (double-click opens one)."""

    opened = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        from bertstudio.core.limits import MAX_NEIGHBOURS

        super().__init__(parent)
        self.count = QSpinBox()
        self.count.setRange(1, MAX_NEIGHBOURS)
        self.count.setValue(10)
        self.count.setToolTip(f"How many nearest rows (at most {MAX_NEIGHBOURS})")
        self.find_button = QPushButton("Find nearest rows")
        self.find_button.setToolTip("Rows of this file nearest to the selected row: cosine of mean-pooled "
                                    "last-layer embeddings (the projector's, when it used mean pooling)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.status = ElidedLabel("Select a row above, then Find.")
        self.table = RecordsView(NEIGHBOUR_HEADERS, stretch=5)
        self.table.opened.connect(self.opened.emit)
        bar_above(self, row(QLabel("Rows:"), self.count, self.find_button, self.cancel_button, self.status),
                  self.table, top=4)

    def show_neighbours(self, found: Any, rows: tuple[Any, ...]) -> None:
        self.table.set_records([(n.row, n.score, rows[n.row].gold, rows[n.row].prediction, rows[n.row].correct,
                                 rows[n.row].text) for n in found.neighbours], [n.row for n in found.neighbours])
        layer = "the last layer" if found.layer == -1 else f"layer {found.layer}"
        source = "the projector's mean-pooled vectors" if found.reused else f"{layer}'s mean-pooled vectors"
        self.status.setText(f"Nearest to row {found.row}: {rows[found.row].text} ({source}, cosine, brute force)")


class RowsPage(RowsBrowser):
    """The row browser (several rows can be selected) over the two tools."""

    def __init__(self, errors_only: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(errors_only, parent)
        self.request: Any = None  # LoadRequest of the evaluated model
        self.result: Any = None  # the Evaluation
        self.vectors: Any = None  # mean-pooled vectors of the file's rows, once computed
        self.vectors_layer = -1
        self.explain_panel = ExplainRowsPanel()
        self.neighbours_panel = NeighboursPanel()
        self.neighbours_panel.opened.connect(self.opened.emit)
        self.tools = QTabWidget()
        self.tools.addTab(self.explain_panel, "Explain selected")
        self.tools.addTab(self.neighbours_panel, "Nearest rows")
        self.box.removeWidget(self.table)
        self.table.setMinimumHeight(110)
        split = splitter(Qt.Orientation.Vertical, self.table, self.tools, sizes=(280, 320))
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        self.box.addWidget(split, 1)
        self.explain_runner = self._runner(self.explain_panel, self.explain_panel.show_explanation)
        self.neighbours_runner = self._runner(self.neighbours_panel, self._show_neighbours)
        self.explain_panel.explain_button.clicked.connect(self.explain_selected)
        self.neighbours_panel.find_button.clicked.connect(self.find_neighbours)

    def _runner(self, panel: Any, show: Any) -> TaskRunner:
        runner = TaskRunner(self)
        runner.result.connect(show)
        runner.error.connect(lambda error: panel.status.setText(getattr(error, "message", None) or str(error)))
        runner.progress.connect(lambda event: panel.status.setText(event.message))
        runner.cancelled.connect(lambda: panel.status.setText("Cancelled."))
        runner.started.connect(lambda: panel.cancel_button.setEnabled(True))
        runner.finished.connect(lambda: panel.cancel_button.setEnabled(False))
        panel.cancel_button.clicked.connect(runner.cancel)
        return runner

    def set_context(self, request: Any, result: Any) -> None:
        """A new evaluation (and the model request it ran with): the tools start afresh."""
        self.request, self.result, self.vectors = request, result, None
        for runner in (self.explain_runner, self.neighbours_runner):
            runner.cancel()
        self.explain_panel.clear()
        self.neighbours_panel.table.source_model.clear()
        self.set_rows(result.rows if result is not None else ())

    def offer_vectors(self, projection: Any) -> None:
        """The projector's vectors, reused for nearest rows where they are mean-pooled."""
        if projection.pooling == "mean" and projection.vectors is not None and self.result is not None \
                and len(projection.vectors) == self.result.n:
            self.vectors, self.vectors_layer = projection.vectors, projection.layer

    def selected_rows(self) -> list[int]:
        """The evaluated rows selected in the table (data row numbers), in view order."""
        model = self.table.selectionModel()
        views = sorted({index.row() for index in model.selectedRows()}) if model is not None else []
        return [int(row) for row in (self.table.payload_at(v) for v in views) if row is not None]

    def explain_selected(self) -> None:
        from bertstudio.core.evaluate.jobs import rows_explanation_job
        from bertstudio.core.limits import MAX_EXPLAIN_ROWS

        rows = self.selected_rows()
        if self.result is None or self.request is None:
            self.explain_panel.status.setText("Run an evaluation first.")
        elif not rows:
            self.explain_panel.status.setText("Select one or more rows in the table above (Ctrl/Shift+click).")
        elif len(rows) > MAX_EXPLAIN_ROWS:
            self.explain_panel.status.setText(f"{len(rows)} rows are selected: explain at most {MAX_EXPLAIN_ROWS} "
                                              "at a time.")
        else:
            self.explain_runner.start(rows_explanation_job, self.request, self.result, tuple(rows),
                                      self.explain_panel.method.currentData(), self.explain_panel.share.isChecked())

    def find_neighbours(self) -> None:
        from bertstudio.core.evaluate.jobs import nearest_rows_job

        rows = self.selected_rows()
        if self.result is None or self.request is None or self.result.dataset is None:
            self.neighbours_panel.status.setText("Run an evaluation first.")
        elif not rows:
            self.neighbours_panel.status.setText("Select the row to find neighbours of.")
        else:
            self.neighbours_runner.start(nearest_rows_job, self.request, self.result.dataset, rows[0],
                                         self.neighbours_panel.count.value(), self.vectors, self.vectors_layer)

    def _show_neighbours(self, found: Any) -> None:
        if self.result is not None and len(found.vectors) == self.result.n:
            self.vectors, self.vectors_layer = found.vectors, found.layer
            self.neighbours_panel.show_neighbours(found, self.result.rows)
