"""What compression costs, in the Evaluate tab's compare view: the linear CKA heatmap (which layer of
B matches which layer of A; core/compression/cka.py), salience agreement, size and speed.

The heatmap is a row-major pyqtgraph ImageItem (rows: A's hidden states, top to bottom; columns:
B's), on a fixed 0-1 colour bar, each cell's value written while the cells are few, the best match
per column of B ringed. pyqtgraph and numpy are imported on first use (tests/test_startup.py).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QWidget

from bertstudio.ui.widgets.eval_tables import RecordsView
from bertstudio.ui.widgets.layouts import bar_above, column, row, splitter

MAX_WRITTEN = 196  # cells (14 x 14: BERT-base against itself) beyond which values are in the tooltip only
EMPTY_TEXT = "Measure to see which layer of B matches which layer of A here."
IDLE = "Compare two models (tick “Compare with…” and run), then Measure: linear CKA per layer pair, " \
       "salience agreement, size and speed."


class CkaHeatmap(QWidget):
    """A (layers_A + 1) x (layers_B + 1) CKA matrix on a 0-1 colour scale, axes "layer of A" / "layer of B"."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        import pyqtgraph as pg

        from bertstudio.ui import plot_style

        self.matrix: Any = None
        self.texts: list[Any] = []
        self.plot = pg.PlotWidget()
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        item = self.plot.getPlotItem()
        item.invertY(True)  # hidden state 0 (the embeddings) at the top
        item.setLabel("left", "layer of A")
        item.setLabel("bottom", "layer of B")
        item.setContentsMargins(0, 10, 4, 0)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.colour_bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get("viridis"), interactive=False,
                                          label="linear CKA")
        self.colour_bar.setImageItem(self.image, insert_in=item)
        # before a measurement: a sentence, not empty axes and a colour bar over nothing (issue 29 #21)
        self.empty = pg.TextItem(EMPTY_TEXT, anchor=(0.5, 0.5))
        self.plot.addItem(self.empty)
        plot_style.style_plot(self.plot)
        self.plot.setToolTip("Linear CKA of A's hidden state (row) and B's (column); 0 is the embeddings. "
                             "1: the same representation up to rotation and scale.")
        column(self.plot, owner=self)
        self.clear()

    def _show_axes(self, shown: bool) -> None:
        item = self.plot.getPlotItem()
        for side in ("left", "bottom"):
            item.showAxis(side, shown)
        self.colour_bar.setVisible(shown)
        self.empty.setVisible(not shown)

    def set_matrix(self, matrix: Any) -> None:
        import numpy as np
        import pyqtgraph as pg

        for text in self.texts:
            self.plot.removeItem(text)
        self.texts = []
        self.matrix = np.asarray(matrix, dtype=np.float32)
        rows, columns = self.matrix.shape
        self._show_axes(True)
        self.image.setImage(self.matrix, levels=(0.0, 1.0), autoLevels=False)
        item = self.plot.getPlotItem()
        item.getAxis("left").setTicks([[(i + 0.5, str(i)) for i in range(rows)]])
        item.getAxis("bottom").setTicks([[(j + 0.5, str(j)) for j in range(columns)]])
        item.setRange(xRange=(0, columns), yRange=(0, rows), padding=0)
        if 0 < rows * columns <= MAX_WRITTEN:
            best = self.matrix.argmax(axis=0)
            for i in range(rows):
                for j in range(columns):
                    value = float(self.matrix[i, j])
                    mark = "*" if best[j] == i else ""
                    text = pg.TextItem(f"{value:.2f}{mark}", color="k" if value > 0.6 else "w", anchor=(0.5, 0.5))
                    text.setPos(j + 0.5, i + 0.5)
                    self.plot.addItem(text)
                    self.texts.append(text)

    def clear(self) -> None:
        for text in self.texts:
            self.plot.removeItem(text)
        self.texts = []
        self.image.clear()
        item = self.plot.getPlotItem()
        item.getAxis("left").setTicks(None)
        item.getAxis("bottom").setTicks(None)
        self.matrix = None
        from bertstudio.ui import theme

        self.empty.setColor(theme.colors().foreground)
        self._show_axes(False)
        self.empty.setPos(0.5, 0.5)
        item.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)


def _ratio(a: float | None, b: float | None) -> str:
    return f"{b / a:.2f}×" if a and b is not None else "–"


def _value(value: float | None, unit: str = "") -> str:
    return "–" if value is None else f"{value:,.1f}{unit}"


class CompressionPage(QWidget):
    """Measure button and status over the size/speed table and the CKA heatmap."""

    compute_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.report: Any = None
        self.measure = QPushButton("Measure")
        self.measure.setToolTip("Read both models' hidden states on the file's rows (linear CKA), explain a sample "
                                "of rows with both (salience agreement), and time their forward passes")
        self.measure.setEnabled(False)
        self.measure.clicked.connect(self.compute_requested)
        self.status = QLabel(IDLE)
        self.status.setWordWrap(True)
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.table = RecordsView(("", "A", "B", "B / A"), stretch=0)
        self.heatmap = CkaHeatmap()
        bar_above(self, row(self.measure, self.status), splitter(Qt.Orientation.Horizontal,
                  column(self.summary, self.table), self.heatmap, sizes=(320, 520)))

    def set_comparison(self, comparison: Any) -> None:
        """A new comparison (or None): the old report no longer belongs to it."""
        self.report = None
        self.measure.setEnabled(comparison is not None)
        self.status.setText(IDLE if comparison is None else
                            "Measure what separates A and B beyond their predictions.")
        self.summary.setText("")
        self.table.source_model.clear()
        self.heatmap.clear()

    def show_report(self, report: Any) -> None:
        self.report = report
        self.measure.setEnabled(True)
        salience = report.salience
        agreeing = (f"salience agreement ({salience.method}, Spearman over {len(salience.rows)} rows): "
                    f"<b>{salience.mean:.3f}</b>" if salience is not None and salience.mean is not None
                    else "no salience agreement (see the notes)")
        matches = ", ".join(f"{j}→{i}" for j, i in enumerate(report.best_matches))
        self.summary.setText(f"Top-1 agreement {report.agreement:.1%}, McNemar p = {report.mcnemar_p:.4g}; "
                             f"{agreeing}.<br>Layer of B → most similar layer of A: {matches}")
        self.status.setText(f"Linear CKA on {report.cka_rows:,} rows ({report.seconds:.1f} s).")
        a, b, fast_a, fast_b = report.size_a, report.size_b, report.speed_a, report.speed_b
        self.table.set_records([
            ("parameters", f"{a.parameters:,}", f"{b.parameters:,}", _ratio(a.parameters, b.parameters)),
            ("size on disk", _value(a.disk_mb, " MB"), _value(b.disk_mb, " MB"), _ratio(a.disk_mb, b.disk_mb)),
            ("size in memory", _value(a.memory_mb, " MB"), _value(b.memory_mb, " MB"),
             _ratio(a.memory_mb, b.memory_mb)),
            ("rows/s (evaluate)", _value(fast_a.rows_per_second), _value(fast_b.rows_per_second),
             _ratio(fast_a.rows_per_second, fast_b.rows_per_second)),
            ("rows/s (forward)", _value(fast_a.forward_rows_per_second), _value(fast_b.forward_rows_per_second),
             _ratio(fast_a.forward_rows_per_second, fast_b.forward_rows_per_second)),
        ])
        self.heatmap.set_matrix(report.cka)

    def show_error(self, message: str) -> None:
        self.measure.setEnabled(True)
        self.status.setText(message)
