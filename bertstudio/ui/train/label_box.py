"""The Train form's label box (issue 41): before Start, the training file's label distribution as a
small horizontal bar plot with advice (balanced class weights where the largest class has over 5x
the rows of the smallest), and multi-label proposed where the label column holds `|`: the Multi-label
box is ticked for the person, once per file, with a note saying so. The rows of the settings only a
text classifier's loss reads are shown for such a task alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QCheckBox, QGroupBox, QLabel, QVBoxLayout, QWidget

from bertstudio.ui import plot_style, theme
from bertstudio.ui.train.form import ConfigForm

SHOWN_LABELS = 12  # the most frequent ones; the rest are counted in the title
BAR_HEIGHT = 16  # pixels per label
PROPOSED = ("The label column holds several labels per row (separated by '|'): Multi-label was ticked for you "
            "(a sigmoid per label).")
LOSS_FIELDS = ("multi_label", "class_weights", "loss", "focal_gamma")  # text classification only


class LabelBox(QGroupBox):
    """Rows per label of the training file, and what to do about an imbalance."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Labels in the training file", parent)
        self.plot = pg.PlotWidget()
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.getPlotItem().setLabel("bottom", "rows")
        plot_style.no_si_prefix(self.plot)
        plot_style.style_plot(self.plot)
        self.bars: pg.BarGraphItem | None = None
        self.note = QLabel("")
        self.note.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.plot)
        layout.addWidget(self.note)
        self.distribution: Any = None
        self.proposed_for = ""  # the file multi-label was proposed for (once: unticking it is the person's call)
        self.setVisible(False)

    def clear(self) -> None:
        self.distribution = None
        self.setVisible(False)

    def show_distribution(self, distribution: Any, note: str = "") -> None:
        """Bars of the most frequent labels (largest on top) and the advice, if any."""
        self.distribution = distribution
        counts = list(distribution.counts.items())[:SHOWN_LABELS]
        if self.bars is not None:
            self.plot.removeItem(self.bars)
        names = [name for name, _ in reversed(counts)]
        values = np.array([value for _, value in reversed(counts)], dtype=float)
        colour = theme.colors().series_a
        self.bars = pg.BarGraphItem(x0=0, y=np.arange(len(values)), height=0.7, width=values, brush=colour)
        self.plot.addItem(self.bars)
        self.plot.getAxis("left").setTicks([list(enumerate(names))])
        self.plot.setXRange(0, max(1.0, float(values.max()) if len(values) else 1.0), padding=0.05)
        self.plot.setYRange(-0.6, len(values) - 0.4, padding=0)
        self.plot.setFixedHeight(40 + BAR_HEIGHT * max(2, len(values)))
        more = len(distribution.counts) - len(counts)
        kind = "multi-label, " if distribution.multi_label else ""
        self.setTitle(f"Labels in the training file ({kind}{distribution.rows} rows"
                      + (f"; {more} more labels not shown)" if more > 0 else ")"))
        self.note.setText(" ".join(text for text in (note, distribution.advice) if text))
        self.setVisible(True)


def on_preview(box: LabelBox, check: QCheckBox, preview: Any) -> str | None:
    """The plan preview's label counts drawn; where its labels hold `|` and Multi-label is off, the
    line the plan shows instead (None: the plan is drawn)."""
    if preview.distribution is None:
        box.clear()
        return None
    if preview.plan is not None:  # the proposal's note stays while it is taken
        taken = box.proposed_for == preview.path and check.isChecked()
        box.show_distribution(preview.distribution, PROPOSED if taken else "")
        return None
    said = propose_multi_label(box, check, preview.path)  # ticking it replans
    box.show_distribution(preview.distribution, said or "")
    return ("Reading the data for the plan…" if said else
            "The labels hold several labels per row ('|'): tick Multi-label to train them.")


def propose_multi_label(box: LabelBox, check: QCheckBox, path: str) -> str | None:
    """A `|` file while Multi-label is off: tick it for the person (once per file) and say so; None
    when it was proposed already (the person unticked it: the plan's own error then says why)."""
    if box.proposed_for == path:
        return None
    box.proposed_for = path
    check.setChecked(True)
    return PROPOSED


def show_loss_rows(form: ConfigForm, trainable: Any) -> None:
    """Multi-label, class weights and the focal loss: only for a task whose loss they change."""
    weighted = bool(getattr(trainable, "weighted_loss", False))
    for name in LOSS_FIELDS:
        option = form.options[name]
        form.layouts[option.group].setRowVisible(form.rows[name], weighted)
