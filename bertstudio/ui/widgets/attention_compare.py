"""The attention tab's Compare view: mean |B - A| per head (layers x heads), and B - A of one
head on a symmetric diverging scale; it follows the view state's hidden tokens and quadrant."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from bertstudio.core.tasks.attention.bundle import AttentionBundle, is_identity, shown
from bertstudio.core.tasks.attention.state import VIEW_FIELDS, AttentionViewState
from bertstudio.ui.widgets.attention_heatmap import DIVERGING, AttentionHeatmap
from bertstudio.ui.widgets.attention_pages import StatePage, readout_label

EMPTY = np.zeros((0, 0), dtype=np.float32)
HINT = "Tick “Compare with…”, choose a second model and run: B - A per head shows here."


class ComparePage(StatePage):
    FIELDS = VIEW_FIELDS

    def __init__(self, state: AttentionViewState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.source_a = ""
        self.head: tuple[int, int] | None = None
        self.summary = AttentionHeatmap()  # layers x heads, mean |B - A|
        self.summary.plot.setLabel("left", "layer")
        self.summary.plot.setLabel("bottom", "head")
        self.summary.describe = self._describe_summary_cell
        self.summary.clicked.connect(self.open_difference)
        self.summary.arrow.connect(self.step)
        self.diff = AttentionHeatmap()  # B - A of one head, diverging colours around 0
        self.diff.set_colormap(DIVERGING)
        self.diff.describe = self._describe_difference
        self.diff.arrow.connect(self.step)
        self.info = QLabel(HINT)
        self.info.setWordWrap(True)
        self.readout = readout_label("Hover a cell")
        self.summary.hovered.connect(self.readout.setText)
        self.diff.hovered.connect(self.readout.setText)
        self.maps = QSplitter(Qt.Orientation.Horizontal)
        self.maps.addWidget(self.summary)
        self.maps.addWidget(self.diff)
        self.maps.setSizes([350, 650])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.info)
        layout.addWidget(self.maps, 1)
        layout.addWidget(self.readout)
        layout.addStretch(0)
        self._show_maps(False)  # before a comparison: the sentence, not two empty heatmaps' axes

    def _show_maps(self, shown: bool) -> None:
        self.maps.setVisible(shown)
        self.readout.setVisible(shown)

    def lazy(self) -> bool:
        return False

    def set_bundle(self, bundle: AttentionBundle | None, source_a: str = "") -> None:
        """A new result: the summary, and the most changed head opened."""
        self.source_a = source_a
        self.head = None
        self.bundle = bundle
        comparison = bundle.comparison if bundle is not None else None
        if comparison is None or comparison.diff is None:
            self.info.setText(HINT if comparison is None else f"<b>B</b> {comparison.source}: {comparison.message}")
            self.summary.set_matrix(EMPTY, [], [])
            self.diff.set_matrix(EMPTY, [], [])
            self._show_maps(False)
            return
        self._show_maps(True)
        self._summary()

    def norms(self) -> bool:
        """The state asks for value-weighted norms and both results have them."""
        bundle = self.bundle
        return bool(self.state.settings.norms and bundle is not None and bundle.norm_mean_abs is not None)

    def _summary(self) -> None:
        """Mean |B - A| per head, of the weights or of the norms (the view state's choice)."""
        bundle = self.bundle
        comparison = bundle.comparison if bundle is not None else None
        if bundle is None or comparison is None or comparison.diff is None:
            return
        norms = self.norms()
        what = "norms" if norms else "weights"
        mean_abs = bundle.norm_mean_abs if norms and bundle.norm_mean_abs is not None else comparison.diff.mean_abs
        layers, heads = mean_abs.shape
        order = np.argsort(-mean_abs, axis=None)[:3]
        most = ", ".join(f"L{i // heads} H{i % heads} ({mean_abs.flat[i]:.3f})" for i in order)
        self.info.setText(
            f"<b>A</b> {self.source_a or 'model A'} vs <b>B</b> {comparison.source}: mean |B − A| of the {what} per "
            f"head (left; click a head), B − A of that head (right; red: B more). Most changed: {most}."
        )
        self.summary.set_matrix(mean_abs, [f"L{i}" for i in range(layers)],
                                [f"H{h}" for h in range(heads)], f"mean |B − A| per head ({what})")
        layer, head = self.head if self.head is not None else divmod(int(order[0]), heads)
        self.open_difference(layer, head)

    def draw(self, bundle: AttentionBundle) -> None:
        if self.head is not None:
            self._summary()

    def open_difference(self, layer: int, head: int) -> None:
        """Show B - A of one head (after the view options), on a symmetric diverging scale."""
        bundle = self.bundle
        comparison = bundle.comparison if bundle is not None else None
        if bundle is None or comparison is None or comparison.diff is None:
            return
        self.head = (layer, head)
        result = bundle.result
        queries, keys, view = shown(result, self.state.settings.options(result.b_start is not None))
        if self.norms() and result.norms is not None and comparison.result.norms is not None:
            view = replace(view, renormalise=False)
            matrix = view.apply(comparison.result.norms[layer, head]) - view.apply(result.norms[layer, head])
            title = f"B − A of the norms, layer {layer}, head {head}"
        elif is_identity(view, result.length):
            matrix, title = comparison.diff.difference[layer, head], f"B − A, layer {layer}, head {head}"
        else:  # the difference of what is shown (renormalised rows included)
            matrix = view.apply(comparison.result.attentions[layer, head]) - view.apply(result.attentions[layer, head])
            title = f"B − A, layer {layer}, head {head}"
        top = float(np.abs(matrix).max()) if matrix.size else 0.0
        top = top if top > 0 else 1e-6
        self.diff.set_matrix(matrix, queries, keys, title, levels=(-top, top))

    def step(self, layers: int, heads: int) -> None:
        """The arrow keys: step the compared head by layers and heads (wrapping round the grid)."""
        if self.head is None or self.bundle is None:
            return
        result = self.bundle.result
        count = result.heads
        index = (self.head[0] * count + self.head[1] + heads + layers * count) % (result.layers * count)
        self.open_difference(index // count, index % count)

    def _describe_summary_cell(self, _q: str, _k: str, value: float, layer: int, head: int) -> str:
        comparison = self.bundle.comparison if self.bundle is not None else None
        diff = comparison.diff if comparison is not None else None
        top = f" (largest {diff.max_abs[layer, head]:.4f})" if diff is not None and not self.norms() else ""
        return f"layer {layer}, head {head}: mean |B − A| = {value:.4f}{top}; click to open"

    def _describe_difference(self, query: str, key: str, value: float, row: int, column: int) -> str:
        text = f"{query} -> {key}: B − A = {value:+.4f}"
        bundle = self.bundle
        comparison = bundle.comparison if bundle is not None else None
        if bundle is not None and comparison is not None and self.head is not None:
            result = bundle.result
            _queries, _keys, view = shown(result, self.state.settings.options(result.b_start is not None))
            layer, head = self.head
            q, k = int(view.rows[row]), int(view.cols[column])
            a, b = result.attentions, comparison.result.attentions
            if self.norms() and result.norms is not None and comparison.result.norms is not None:
                a, b = result.norms, comparison.result.norms
            text += f" (A {a[layer, head, q, k]:.4f}, B {b[layer, head, q, k]:.4f})"
        return text
