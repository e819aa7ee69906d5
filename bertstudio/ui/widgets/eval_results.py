"""The Evaluate view's result pages: metrics and slices, confusion matrix, error browser, the
comparison of two models, and the embedding projector. Each page only renders what it is given."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QLineEdit, QPushButton, QSpinBox, QWidget

from bertstudio.ui.widgets.confusion_matrix import ConfusionMatrixView
from bertstudio.ui.widgets.elided_label import ElidedLabel
from bertstudio.ui.widgets.eval_tables import RecordsView
from bertstudio.ui.widgets.layouts import bar_above, column, row, splitter
from bertstudio.ui.widgets.projector_plot import ProjectorPlot

ROW_HEADERS = ("row", "line", "gold", "prediction", "score", "correct", "text")


def row_record(row: Any) -> tuple[Any, ...]:
    return (row.row, row.line, row.gold, row.prediction, row.score, row.correct, row.text)


def _titled(title: str, widget: QWidget) -> QWidget:
    return column(QLabel(f"<b>{title}</b>"), widget)


class MetricsPage(QWidget):
    """Overall metrics, per class (or entity type), and slices with a filter."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.metrics = RecordsView(("metric", "value"), stretch=0)
        self.per_label = RecordsView(("label", "precision", "recall", "f1", "support"), stretch=0)
        self.slices = RecordsView(("slice by", "value", "rows", "row accuracy", "metric", "value"), stretch=1)
        self.slice_filter = QLineEdit()
        self.slice_filter.setPlaceholderText("Filter slices (e.g. length, column:domain, a label)…")
        self.slice_filter.textChanged.connect(self.slices.set_filter)
        self.per_label_title = QLabel()
        self.per_label_box = column(self.per_label_title, self.per_label)
        top = splitter(Qt.Orientation.Horizontal, _titled("Metrics", self.metrics), self.per_label_box)
        bottom = column(QLabel("<b>Slices</b>"), self.slice_filter, self.slices)
        column(splitter(Qt.Orientation.Vertical, top, bottom), owner=self)

    def show_result(self, result: Any) -> None:
        self.metrics.set_records([(k, v) for k, v in result.metrics.items()])
        self.per_label_title.setText(f"<b>Per {result.adapter.per_label}</b>")
        self.per_label.set_records([(k, s.precision, s.recall, s.f1, s.support) for k, s in result.per_label.items()])
        self.per_label_box.setVisible(bool(result.per_label))
        main = next((k for k in ("f1", "top1_accuracy", "accuracy") if k in result.metrics), "")
        self.slices.set_records([
            (s.by, s.value, s.n, s.metrics.get("row_accuracy", float("nan")), main, s.metrics.get(main, float("nan")))
            for s in result.slices])

    def clear(self) -> None:
        for view in (self.metrics, self.per_label, self.slices):
            view.source_model.clear()


class RowsBrowser(QWidget):
    """Rows of an evaluation: sortable, filterable; double-click opens one (`opened(row index)`)."""

    opened = Signal(int)

    def __init__(self, errors_only: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: tuple[Any, ...] = ()
        self.table = RecordsView(ROW_HEADERS, stretch=6)
        self.table.opened.connect(self.opened.emit)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter rows (any column)…")
        self.filter.textChanged.connect(self.table.set_filter)
        self.errors_only = QCheckBox("Errors only")
        self.errors_only.setChecked(errors_only)
        self.errors_only.toggled.connect(lambda _: self.set_rows(self.rows))
        self.count = QLabel()
        # RowsPage puts its tools under the table
        self.box = bar_above(self, row(self.filter, self.errors_only, self.count, stretch=0), self.table)
        self.table.proxy.rowsInserted.connect(self._count)
        self.table.proxy.modelReset.connect(self._count)
        self.table.proxy.layoutChanged.connect(self._count)

    def set_rows(self, rows: tuple[Any, ...]) -> None:
        self.rows = rows
        shown = [r for r in rows if not r.correct] if self.errors_only.isChecked() else list(rows)
        self.table.set_records([row_record(r) for r in shown], [r.row for r in shown])
        self._count()

    def _count(self, *_args: Any) -> None:
        self.count.setText(f"{self.table.visible_rows()} of {len(self.rows)} rows")


class ConfusionPage(QWidget):
    """The heatmap; a clicked cell lists its rows below."""

    opened = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: Any = None
        self.matrix = ConfusionMatrixView()
        self.matrix.cell_clicked.connect(self.show_cell)
        self.cell_label = QLabel("Click a cell to list its rows.")
        self.cell_rows = RecordsView(ROW_HEADERS, stretch=6)
        self.cell_rows.opened.connect(self.opened.emit)
        column(splitter(Qt.Orientation.Vertical, self.matrix, column(self.cell_label, self.cell_rows),
                        sizes=(380, 200)), owner=self)

    def show_result(self, result: Any) -> None:
        self.result = result
        if result.confusion is None:
            self.matrix.clear()
        else:
            self.matrix.set_matrix(result.confusion.labels, result.confusion.matrix)
        self.cell_rows.source_model.clear()
        self.cell_label.setText("Click a cell to list its rows.")

    def show_cell(self, gold: str, prediction: str) -> None:
        rows = self.result.rows_of(gold, prediction) if self.result is not None else ()
        self.cell_label.setText(f"gold <b>{gold}</b>, predicted <b>{prediction}</b>: {len(rows)} row(s)")
        self.cell_rows.set_records([row_record(r) for r in rows], [r.row for r in rows])


class ComparePage(QWidget):
    """Both models' metrics side by side, McNemar's test, and the rows where they disagree."""

    opened = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel("Tick “Compare with…” and run to compare two models on the same rows.")
        self.summary.setWordWrap(True)
        self.metrics = RecordsView(("metric", "A", "B", "B − A"), stretch=0)
        self.disagreements = RecordsView(("row", "gold", "A", "B", "A right", "B right"), stretch=1)
        self.disagreements.opened.connect(self.opened.emit)
        column(self.summary, splitter(Qt.Orientation.Horizontal, _titled("Metrics", self.metrics),
                                      _titled("Rows where A and B disagree", self.disagreements),
                                      sizes=(300, 600)), owner=self)

    def show_comparison(self, comparison: Any) -> None:
        a, b, test = comparison.a, comparison.b, comparison.mcnemar
        verdict = ("a real difference at the 5% level" if test.p_exact < 0.05
                   else "no evidence of a real difference at the 5% level")
        self.summary.setText(
            f"A: {a.model}<br>B: {b.model}<br>{len(comparison.disagreements)} of {a.n} rows differ (top-1 "
            f"agreement {comparison.agreement:.1%}). Only A right: "
            f"{test.a_only}, only B right: {test.b_only}. McNemar p = {test.p_exact:.4g} (exact), "
            f"{test.p_chi2:.4g} (chi-square): {verdict}.")
        keys = [k for k in a.metrics if k in b.metrics]
        costs = [("size (MB)", a.size_mb, b.size_mb),  # what a smaller variant (int8) gains, beside what it costs
                 ("ms per row", 1000 * a.seconds / max(1, a.n), 1000 * b.seconds / max(1, b.n))]
        self.metrics.set_records([(k, a.metrics[k], b.metrics[k], b.metrics[k] - a.metrics[k]) for k in keys]
                                 + [(k, x, y, y - x) for k, x, y in costs])
        self.disagreements.set_records([(d.row, d.gold, d.a, d.b, d.a_correct, d.b_correct)
                                        for d in comparison.disagreements],
                                       [d.row for d in comparison.disagreements])

    def clear(self) -> None:
        self.summary.setText("Tick “Compare with…” and run to compare two models on the same rows.")
        self.metrics.source_model.clear()
        self.disagreements.source_model.clear()


class ProjectorPage(QWidget):
    """Controls (layer, pooling, method, colour) over the scatter, the selected rows below."""

    compute_requested = Signal(int, str, str)  # layer, pooling, method
    opened = Signal(int)

    def __init__(self, methods: tuple[str, ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: Any = None
        self.layer = QSpinBox()
        self.layer.setRange(-64, 64)
        self.layer.setValue(-1)
        self.layer.setToolTip("Hidden-state layer: 0 = embeddings, -1 = the last layer")
        self.pooling = QComboBox()
        self.pooling.addItems(["cls", "mean"])
        self.pooling.setToolTip("[CLS] vector, or the mean over the row's tokens")
        self.method = QComboBox()
        self.method.addItems(list(methods))
        self.method.setToolTip("PCA; UMAP where umap-learn is installed (pip install 'bertstudio[projector]')")
        self.colour = QComboBox()
        self.colour.addItems(["correct", "gold", "prediction"])
        self.colour.currentTextChanged.connect(lambda _: self._recolour())
        self.compute = QPushButton("Project")
        self.compute.setEnabled(False)
        self.compute.clicked.connect(lambda: self.compute_requested.emit(
            self.layer.value(), self.pooling.currentText(), self.method.currentText()))
        self.status = ElidedLabel("Run an evaluation, then project its rows.")  # never widens the window
        self.plot = ProjectorPlot()
        self.plot.selection_changed.connect(self._selected)
        self.chosen = RecordsView(ROW_HEADERS, stretch=6)
        self.chosen.opened.connect(self.opened.emit)
        controls = row(QLabel("Layer"), self.layer, QLabel("Pooling"), self.pooling, QLabel("Projection"), self.method,
                       QLabel("Colour by"), self.colour, self.compute, self.status)
        bar_above(self, controls, splitter(Qt.Orientation.Vertical, self.plot, self.chosen, sizes=(420, 160)))

    def set_result(self, result: Any) -> None:
        self.result = result
        self.compute.setEnabled(result is not None)
        if result is not None and result.adapter.labelled:  # one label per row: colour by it
            self.colour.setCurrentText("gold")

    def show_projection(self, projection: Any) -> None:
        rows = self.result.rows
        names = [f"{'PC' if projection.method == 'pca' else 'UMAP '}{i + 1}"
                 + (f" ({projection.explained[i]:.0%} of variance)" if projection.explained else "") for i in range(2)]
        self.plot.set_points(projection.points, [r.text for r in rows], self._categories(), (names[0], names[1]))
        self.status.setText(f"{len(rows)} rows, layer {projection.layer}, {projection.pooling} pooling, "
                            f"{projection.method.upper()}")

    def _categories(self) -> list[str]:
        rows = self.result.rows if self.result is not None else ()
        choice = self.colour.currentText()
        if choice == "correct":
            return ["right" if r.correct else "wrong" for r in rows]
        return [r.gold if choice == "gold" else r.prediction for r in rows]

    def _recolour(self) -> None:
        if self.result is not None and len(self.plot.points) == len(self.result.rows):
            self.plot.colour_by(self._categories())

    def _selected(self, indices: list[int]) -> None:
        rows = [self.result.rows[i] for i in indices] if self.result is not None else []
        self.chosen.set_records([row_record(r) for r in rows], [r.row for r in rows])
