"""Head importance as a layer x head heatmap, and "prune the k least important" side by side.

The heatmap is a pyqtgraph ImageItem with a ColorBarItem (no SI prefixes); layer 0 is at the
top as in the attention grid. The preview shows the task's result intact and with the k least
important heads switched off, from one job (core.jobs.run_spec with compare_ablated).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from bertstudio.ui.widgets.forms import browse_button, spin_box
from bertstudio.ui.widgets.layouts import row


def summary_of(summary: Callable[[Any], str] | None, result: Any) -> str:
    """A few lines that say what a task's result is (for intact vs pruned), by the task's own
    summary (its spec's Explain adapter); a result it cannot read shows as it is."""
    if result is None:
        return ""
    if summary is not None:
        try:
            return summary(result)
        except (AttributeError, IndexError):
            pass
    return str(result)


class HeadImportanceView(QWidget):
    compute_requested = Signal(str, bool)  # data file ("" = the current input), normalise per layer
    prune_requested = Signal(object)  # the heads to switch off, ((layer, head), ...)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.importance: Any = None
        self.data_file = QLineEdit()
        self.data_file.setPlaceholderText("optional: a data file (CSV/TSV for classification; else one input per line)")
        self.normalise = QCheckBox("Normalise per layer (L2)")
        self.normalise.setChecked(True)
        self.compute_button = QPushButton("Compute head importance")
        self.compute_button.clicked.connect(
            lambda: self.compute_requested.emit(self.data_file.text().strip(), self.normalise.isChecked()))
        self.k = spin_box(1, 1, prefix="k = ")
        self.prune_button = QPushButton("Preview: prune the k least important")
        self.prune_button.setEnabled(False)
        self.prune_button.clicked.connect(self._prune)
        self.pruned_label = QLabel()
        self.pruned_label.setWordWrap(True)
        self._build_plot()
        self.intact = QTextBrowser()
        self.pruned = QTextBrowser()
        for box, what in ((self.intact, "all heads on"), (self.pruned, "k heads off")):
            box.setPlaceholderText(f"Preview: {what}")  # short: a placeholder does not wrap
        side = QVBoxLayout()
        side.addLayout(row(self.k, self.prune_button, self.pruned_label, stretch=self.pruned_label))
        pair = QHBoxLayout()
        for title, box in (("intact", self.intact), ("pruned", self.pruned)):
            column = QVBoxLayout()
            column.addWidget(QLabel(f"<b>{title}</b>"))
            column.addWidget(box, 1)
            pair.addLayout(column)
        side.addLayout(pair, 1)
        body = QHBoxLayout()
        body.addWidget(self.plot_widget, 3)
        body.addLayout(side, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        browse = browse_button(self.data_file, "Data for head importance",
                               "Tables or text (*.csv *.tsv *.txt);;All files (*)", text="Open…")
        layout.addLayout(row(self.data_file, browse, self.normalise, self.compute_button, stretch=self.data_file))
        layout.addLayout(body, 1)

    def _build_plot(self) -> None:
        import pyqtgraph as pg

        from bertstudio.ui import plot_style

        self.plot_widget = pg.PlotWidget()
        self.plot = self.plot_widget.getPlotItem()
        self.plot.invertY(True)
        self.plot.setLabel("left", "layer")
        self.plot.setLabel("bottom", "head")
        self.image = pg.ImageItem()
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(values=(0, 1), colorMap=pg.colormap.get("viridis"), label="importance",
                                        interactive=False)
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        self.colorbar.axis.enableAutoSIPrefix(False)
        self.plot.setContentsMargins(0, 10, 4, 0)  # room above for layer 0's tick and the colour bar's "1.0"
        self.hint = pg.TextItem("Press Compute head importance: each layer x head cell\n"
                                "scores how much the task's loss depends on that head.", anchor=(0.5, 0.5))
        self.plot.addItem(self.hint)
        self.hint.setPos(0.5, 0.5)
        self._empty()
        plot_style.style_plot(self.plot_widget, on_theme=self._on_theme)  # theme colours, restyled with it

    def _on_theme(self, colors: Any) -> None:
        self.hint.setColor(colors.foreground)

    def clear(self) -> None:
        self.importance = None
        self.image.clear()
        self.prune_button.setEnabled(False)
        self.intact.clear()
        self.pruned.clear()
        self.pruned_label.clear()
        self.plot.setTitle(None)
        self._empty()

    def _empty(self) -> None:
        """Before a run: 0-1 and no tick numbers (not pyqtgraph's ±0.4, nor "layer 0.2")."""
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).setTicks([[]])
        self.plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
        self.hint.setVisible(True)  # a sentence before a run, not axes and a colour bar over nothing
        self.colorbar.setVisible(False)

    def show_importance(self, importance: Any) -> None:
        import numpy as np

        self.importance = importance
        self.hint.setVisible(False)
        self.colorbar.setVisible(True)
        values = np.asarray(importance.importance, dtype=float)  # layers x heads
        from PySide6.QtCore import QRectF

        layers, heads = values.shape
        self.image.setImage(values.T, autoLevels=False)  # ImageItem: x = head, y = layer
        self.image.setRect(QRectF(-0.5, -0.5, heads, layers))  # cell centres on the integer ticks
        step = max(1, layers // 12), max(1, heads // 16)
        self.plot.getAxis("left").setTicks([[(i, str(i)) for i in range(0, layers, step[0])]])
        self.plot.getAxis("bottom").setTicks([[(i, str(i)) for i in range(0, heads, step[1])]])
        top = float(values.max()) if values.size and values.max() > 0 else 1.0
        self.colorbar.setLevels((0.0, top))
        from bertstudio.ui import plot_style

        plot_style.set_title(self.plot, f"{importance.normalization} · {importance.loss} · "
                                        f"{importance.examples} input(s)")
        self.plot.setRange(xRange=(-0.5, heads - 0.5), yRange=(-0.5, layers - 0.5), padding=0)  # every cell
        self.k.setRange(1, max(1, values.size - 1))
        self.prune_button.setEnabled(True)

    def least_important(self) -> tuple[tuple[int, int], ...]:
        return self.importance.least_important(self.k.value()) if self.importance is not None else ()

    def _prune(self) -> None:
        heads = self.least_important()
        if heads:
            self.pruned_label.setText("switching off " + ", ".join(f"{layer}:{head}" for layer, head in heads))
            self.prune_requested.emit(heads)

    def show_preview(self, summary: Callable[[Any], str] | None, outcome: Any) -> None:
        """The intact and the pruned result, each in the task's own few lines (`summary`)."""
        for box, result in ((self.intact, outcome.result), (self.pruned, outcome.second)):
            box.setHtml(f"<pre>{html.escape(summary_of(summary, result))}</pre>")
