"""The Evaluate view's Curves page: precision-recall and ROC curves of one class against the rest
(scikit-learn's, from the evaluation's class probabilities), and a threshold tuner that shows the
2 x 2 confusion matrix and the metrics at the chosen threshold, its point marked on both curves.

A class pick computes its curves and sorted scores in a worker (`core.evaluate.jobs.curves_job`);
moving the threshold is then a binary search (`curves.ThresholdTable.at`), so the slider follows
the mouse at 100,000 rows. Both plots keep fixed 0-1 axes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QGraphicsItem, QHBoxLayout, QLabel, QSlider, QWidget

from bertstudio.ui import plot_style
from bertstudio.ui.theme import Colors
from bertstudio.ui.widgets.confusion_matrix import ConfusionMatrixView
from bertstudio.ui.widgets.elided_label import ElidedLabel
from bertstudio.ui.widgets.eval_tables import RecordsView
from bertstudio.ui.widgets.layouts import bar_above, row, splitter
from bertstudio.workers.runner import TaskRunner

STEPS = 1000  # slider positions: thresholds 0.000 to 1.000
GRID = 2000  # curves are drawn on this grid: a 100,000-point curve repainted on each slider step stalled


def thinned(x: np.ndarray, y: np.ndarray, grid: int = GRID) -> tuple[np.ndarray, np.ndarray]:
    """The curve's points less those that stay in the previous point's cell of a grid x grid
    raster (finer than any plot's pixels): the same picture, a few thousand points at most."""
    if len(x) <= 2 * grid:
        return x, y
    cells_x, cells_y = np.round(np.asarray(x) * grid), np.round(np.asarray(y) * grid)
    keep = np.empty(len(x), dtype=bool)
    keep[0] = keep[-1] = True
    keep[1:-1] = (cells_x[1:-1] != cells_x[:-2]) | (cells_y[1:-1] != cells_y[:-2])
    return x[keep], y[keep]


def steps_post(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points of a step line that holds each y until the next x (matplotlib's "steps-post",
    how scikit-learn's PrecisionRecallDisplay draws the curve: no optimistic interpolation)."""
    if len(x) < 2:
        return np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    xs, ys = np.empty(2 * len(x) - 1), np.empty(2 * len(y) - 1)
    xs[0::2], xs[1::2] = x, x[1:]
    ys[0::2], ys[1::2] = y, y[:-1]
    return xs, ys


def _curve_plot(x_label: str, y_label: str) -> pg.PlotWidget:
    plot = pg.PlotWidget()
    item = plot.getPlotItem()
    item.setMenuEnabled(False)
    item.setMouseEnabled(False, False)
    item.hideButtons()
    plot_style.style_plot(plot)
    plot_style.probability_axis(plot, "bottom", x_label)
    plot_style.probability_axis(plot, "left", y_label)
    item.setRange(xRange=(0.0, 1.0), yRange=(0.0, 1.0), padding=0.02)
    plot.setMinimumSize(220, 120)
    return plot


class CurvesPage(QWidget):
    """Pick a class (binary: the positive class); its curves, then the threshold tuner."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: Any = None
        self.view: Any = None  # curves.ClassView of the picked class
        self.per_label: Any = None  # a multi-label evaluation: each label's own threshold (LabelThresholds)
        self.status = ElidedLabel("Run an evaluation of a classifier to see its curves.")
        self.runner = TaskRunner(self)
        self.runner.result.connect(self.show_view)
        self.runner.error.connect(lambda error: self.status.setText(getattr(error, "message", None) or str(error)))
        self.runner.progress.connect(lambda event: self.status.setText(event.message))
        self.class_combo = QComboBox()
        self.class_combo.setToolTip("The class scored against all the others (its probability is the score)")
        self.class_combo.setMinimumContentsLength(14)
        self.class_combo.currentIndexChanged.connect(lambda _: self.compute())
        self.micro = QCheckBox("Micro-average")
        self.micro.setToolTip("Also draw every (row, class) pair pooled into one curve")
        self.micro.toggled.connect(lambda _: self.compute())
        plots = self._build_plots()
        below = QWidget()
        bar_above(below, self._build_tuner(), self.rule, splitter(Qt.Orientation.Horizontal, self.matrix, self.metrics,
                                                                  sizes=(420, 300)))
        bar_above(self, row(QLabel("Class:"), self.class_combo, self.micro, self.status),
                  splitter(Qt.Orientation.Vertical, plots, below, sizes=(330, 300)))
        self._recolour(plot_style.theme.colors())

    def _build_plots(self) -> QWidget:
        """The precision-recall and ROC plots side by side: the class's curve, the micro-average's, a marker."""
        self.pr_plot = _curve_plot("recall", "precision")
        self.roc_plot = _curve_plot("false positive rate", "true positive rate")
        self.chance = pg.PlotDataItem([0, 1], [0, 1])
        self.roc_plot.addItem(self.chance)
        self.lines = {name: (pg.PlotDataItem(), pg.PlotDataItem()) for name in ("class", "micro")}
        for pr, roc in self.lines.values():
            self.pr_plot.addItem(pr)
            self.roc_plot.addItem(roc)
            for line in (pr, roc):  # painted once into a pixmap: a moved marker does not repaint the curve
                line.curve.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.markers = (pg.ScatterPlotItem(size=11), pg.ScatterPlotItem(size=11))
        for plot, marker in zip((self.pr_plot, self.roc_plot), self.markers, strict=True):
            marker.setZValue(10)
            plot.addItem(marker)
        plot_style.style_plot(self.pr_plot, self._recolour)
        plot_style.style_plot(self.roc_plot, self._recolour)
        return splitter(Qt.Orientation.Horizontal, self.pr_plot, self.roc_plot)

    def _build_tuner(self) -> QHBoxLayout:
        """The threshold's slider and box; the rule, the 2 x 2 matrix and the metrics it gives."""
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, STEPS)
        self.slider.setPageStep(STEPS // 20)
        self.slider.setValue(STEPS // 2)
        self.slider.setToolTip("Threshold: a row is the chosen class when its probability is at least this")
        self.spin = QDoubleSpinBox()
        self.spin.setRange(0.0, 1.0)
        self.spin.setDecimals(3)
        self.spin.setSingleStep(0.01)
        self.spin.setValue(0.5)
        # The value is taken on Enter or focus out, not per keystroke: re-setting it while a person
        # types turned "0.515" into 0.000 (the box reformatted itself after the first "0").
        self.spin.setKeyboardTracking(False)
        self.slider.valueChanged.connect(lambda value: self.set_threshold(value / STEPS))
        self.spin.valueChanged.connect(self.set_threshold)
        self.rule = ElidedLabel("")
        self.matrix = ConfusionMatrixView()
        self.matrix.setMinimumHeight(80)
        # the matrix's own colour bar label ("share of the gold row") is taller than this page's matrix
        # at a 800-pixel window: cut at the top; the short one fits, the tooltip says the whole
        self.matrix.colour_bar.getAxis("left").setLabel("row share")
        self.matrix.setToolTip("Colour: the share of the gold row predicted as the column's class")
        self.metrics = RecordsView(("at the threshold", "value"), stretch=0)
        return row(QLabel("Threshold:"), self.slider, self.spin, stretch=1)

    # -- data --------------------------------------------------------------------------------
    def set_result(self, result: Any) -> None:
        """A new evaluation: its classes in the picker (those in the gold), the curves of the first."""
        from bertstudio.core.evaluate.curves import default_positive, has_probabilities, present_classes
        from bertstudio.core.tasks.classification.evaluate_multilabel import LabelThresholds, is_multi_label_result

        self.result = result if result is not None and has_probabilities(result) else None
        self.per_label = LabelThresholds(self.result) if is_multi_label_result(self.result) else None
        self.view = None
        self._draw()
        with QSignalBlocker(self.class_combo):
            self.class_combo.clear()
            if self.result is not None:
                classes = present_classes(self.result.classes, self.result.golds)
                self.class_combo.addItems(classes)
                positive = default_positive(self.result.classes)
                if positive in classes:
                    self.class_combo.setCurrentText(positive)
        self.micro.setEnabled(self.result is not None and len(self.result.classes) > 2)
        if self.result is None:
            self.runner.cancel()
            self.status.setText("Run an evaluation of a classifier to see its curves.")
            return
        self.compute()

    def compute(self) -> None:
        label = self.class_combo.currentText()
        if self.result is None or not label:
            return
        from bertstudio.core.evaluate.jobs import curves_job

        self.runner.start(curves_job, self.result, label, self.micro.isChecked() and self.micro.isEnabled())

    def show_view(self, view: Any) -> None:
        self.view = view
        curves = view.curves
        ap = f"{curves.average_precision:.3f}" if curves.average_precision is not None else "n/a"
        auc = f"{curves.roc_auc:.3f}" if curves.roc_auc is not None else "n/a (one class only)"
        self.status.setText(f"{curves.label}: {curves.positives} of {curves.positives + curves.negatives} rows, "
                            f"average precision {ap}, ROC AUC {auc}")
        self._draw()
        self.set_threshold(self.per_label.of(curves.label) if self.per_label is not None else self.spin.value())

    # -- the threshold -----------------------------------------------------------------------
    def set_threshold(self, value: float) -> None:
        value = min(1.0, max(0.0, float(value)))
        with QSignalBlocker(self.slider), QSignalBlocker(self.spin):
            self.slider.setValue(round(value * STEPS))
            self.spin.setValue(value)
        if self.view is None:
            return
        at = self.view.table.at(value)
        self.markers[0].setData([at.recall], [at.precision])
        self.markers[1].setData([at.fpr], [at.recall])
        self.matrix.set_matrix(at.labels, at.matrix)
        self.rule.setText(f"A row is '{at.label}' when its probability of '{at.label}' is at least {value:.3f}: "
                          f"{at.tp + at.fp} of {at.n} rows.")
        records: list[tuple[str, Any]] = [
            ("precision", at.precision), ("recall", at.recall), ("F1", at.f1), ("accuracy", at.accuracy),
            ("false positive rate", at.fpr), ("true positives", at.tp), ("false positives", at.fp),
            ("false negatives", at.fn), ("true negatives", at.tn)]
        if self.per_label is not None:  # multi-label: this label's threshold kept, all labels scored at theirs
            self.per_label.set(at.label, value)
            self.rule.setText(f"A row has '{at.label}' when its probability of it is at least {value:.3f}: "
                              f"{at.tp + at.fp} of {at.n} rows (each label keeps its own threshold).")
            records += [(f"all labels: {name}", score) for name, score in self.per_label.metrics().items()]
        self.metrics.set_records(records)

    @property
    def at(self) -> Any:
        """The metrics at the current threshold (None before curves are shown)."""
        return self.view.table.at(self.spin.value()) if self.view is not None else None

    # -- drawing -----------------------------------------------------------------------------
    def _draw(self) -> None:
        view = self.view
        empty = np.zeros(0)
        curves = view.curves if view is not None else None
        micro = view.micro if view is not None else None
        for name, found in (("class", curves), ("micro", micro)):
            pr, roc = self.lines[name]
            pr.setData(*(steps_post(*thinned(found.recall, found.precision)) if found is not None else (empty, empty)))
            roc.setData(*(thinned(found.fpr, found.tpr) if found is not None else (empty, empty)))
        if view is None:
            for marker in self.markers:
                marker.setData([], [])
            self.matrix.clear()
            self.metrics.source_model.clear()
            self.rule.setText("")
        self._legend()

    def _legend(self) -> None:
        colors = plot_style.theme.colors()
        entries = []
        if self.view is not None:
            entries.append((self.view.curves.label, colors.series_a, "━"))
            if self.view.micro is not None:
                entries.append(("micro-average", colors.series_b, "━"))
            entries.append(("threshold", colors.foreground, "●"))
        for plot in (self.pr_plot, self.roc_plot):
            plot_style.legend_outside(plot, entries)

    def _recolour(self, colors: Colors) -> None:
        for name, colour in (("class", colors.series_a), ("micro", colors.series_b)):
            for line in self.lines[name]:
                line.setPen(pg.mkPen(colour, width=2))
        self.chance.setPen(pg.mkPen(colors.muted, width=1, style=Qt.PenStyle.DashLine))
        for marker in self.markers:
            marker.setBrush(pg.mkBrush(colors.foreground))
            marker.setPen(pg.mkPen(colors.background, width=1.5))
        self._legend()
