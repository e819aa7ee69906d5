"""Attention tab: model view (all heads), detail view (one head), head view (lines), statistics."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.attention import (
    QUADRANTS,
    STAT_COLUMNS,
    STAT_TITLES,
    AttentionComparison,
    AttentionResult,
    HeadStatistics,
    ViewOptions,
    make_view,
)
from bertstudio.resources import examples
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.attention_grid import CELL_MAX, AttentionGrid, pooled, with_mean_column
from bertstudio.ui.widgets.attention_head_view import HeadView
from bertstudio.ui.widgets.attention_heatmap import COLORMAPS, DIVERGING, AttentionHeatmap
from bertstudio.ui.widgets.compare_panel import CompareSource

PAIR_SEPARATOR = " ||| "
SOURCES = ("head", "layer mean", "rollout")


@dataclass(frozen=True, eq=False)
class GridStage:
    """Sent as a progress payload as soon as the forward pass is done: enough to draw the grid."""

    result: AttentionResult
    thumbnails: np.ndarray  # layers x (heads + 1) x r x k: max-pooled head cells, the mean of them last


@dataclass(frozen=True, eq=False)
class AttentionBundle:
    """What the worker sends back: the result plus aggregates computed off the GUI thread.

    Between the grid stage and the end of the job the tab holds a bundle whose mean, rollout
    and statistics are None; the detail view then computes the little it needs itself.
    """

    result: AttentionResult
    mean: np.ndarray | None  # layers x T x T
    rollout: np.ndarray | None  # layers x T x T
    statistics: HeadStatistics | None
    thumbnails: np.ndarray  # layers x (heads + 1) x r x k: the model view's max-pooled cells, mean last
    comparison: AttentionComparison | None = None  # model B and B - A per head, when comparing


def grid_stage(result: AttentionResult, cell_max: int = CELL_MAX) -> GridStage:
    """The mosaic's cells straight from the raw attentions: one pooling pass, nothing else."""
    return GridStage(result, with_mean_column(pooled(result.attentions, cell_max)))


def make_bundle(
    result: AttentionResult,
    cell_max: int = CELL_MAX,
    stage: GridStage | None = None,
    comparison: AttentionComparison | None = None,
    control: TaskControl | None = None,
) -> AttentionBundle:
    """Aggregates and grid thumbnails, computed in the worker so the GUI thread only draws."""
    from bertstudio.core.tasks.attention import head_statistics, mean_over_heads, rollout

    stage = stage or grid_stage(result, cell_max)
    if control is not None:
        control.check()
    mean = mean_over_heads(result.attentions)
    if control is not None:
        control.check()
    rolled = rollout(result.attentions, mean)
    if control is not None:
        control.check()
    return AttentionBundle(result, mean, rolled, head_statistics(result), stage.thumbnails, comparison)


def attention_job(
    request: LoadRequest,
    text: str,
    pair: str | None,
    compare_source: str | None = None,
    cell_max: int = CELL_MAX,
    *,
    control: TaskControl,
) -> AttentionBundle:
    """Forward pass, then the grid (as a progress payload), then model B if comparing, then statistics."""
    from dataclasses import replace

    from bertstudio.core.models import load_model
    from bertstudio.core.tasks.attention import compare_attention, compute

    loaded = load_model(request, control)
    control.check()
    result = compute(loaded, text, pair, control)
    control.check()
    stage = grid_stage(result, cell_max)
    control.report("Attention ready; computing statistics…", None, stage)
    comparison = None
    if compare_source:
        control.report(f"Loading {compare_source} to compare…", None)
        other = load_model(replace(request, source=compare_source), control)
        control.check()
        comparison = compare_attention(result, compute(other, text, pair, control), compare_source)
        control.check()
    return make_bundle(result, cell_max, stage, comparison, control)


class _NumberItem(QTableWidgetItem):
    """Sorts by value, not by text."""

    def __init__(self, value: float, text: str) -> None:
        super().__init__(text)
        self.setData(Qt.ItemDataRole.UserRole, value)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        return float(self.data(Qt.ItemDataRole.UserRole)) < float(other.data(Qt.ItemDataRole.UserRole))


class AttentionTab(TaskTab):
    TASK = "attention"
    TITLE = "Attention"
    ORDER = 50
    ATTN_IMPLEMENTATION = "eager"

    def build(self) -> None:
        self.bundle: AttentionBundle | None = None
        self._updating = False
        # input
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText("Sentence A: the text whose attention you want to see…")
        self.text.setMaximumHeight(70)
        self.pair = QLineEdit()
        self.pair.setPlaceholderText("Sentence B (optional): a second sentence, to study A↔B attention")
        self.examples = QComboBox()
        self.examples.addItem("Examples…")
        for line in examples("attention"):
            self.examples.addItem(line.replace(PAIR_SEPARATOR, "  |  "), line)
        self.examples.activated.connect(self._example_chosen)
        self.run_button = QPushButton("Show attention")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda: self.runner.cancel())
        self.compare_source = CompareSource(self.model_bar.source)
        self.compare_source.setToolTip("Run a second model on the same input; the Compare view shows B - A per head")
        row = QHBoxLayout()
        row.addWidget(self.pair, 1)
        row.addWidget(self.examples)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        # options
        self.source = QComboBox()
        self.source.addItems(SOURCES)
        self.source.setToolTip("head: one head; layer mean: average of the layer's heads; "
                               "rollout: attention rollout up to the layer (Abnar & Zuidema, 2020)")
        self.hide_special = QCheckBox("Hide [CLS]/[SEP]")
        self.renormalise = QCheckBox("renormalise rows")
        self.renormalise.setChecked(True)
        self.renormalise.setToolTip("After hiding special tokens, scale each row to sum to 1 over the tokens left")
        self.quadrant = QComboBox()
        self.quadrant.addItems(QUADRANTS)
        self.quadrant.setToolTip("For pairs: queries from one sentence, keys from the other (not renormalised)")
        self.colours = QComboBox()
        self.colours.addItems(COLORMAPS)
        self.export_button = QPushButton("Export")
        menu = QMenu(self.export_button)
        for label, what in (("Current view as PNG…", "png"), ("Selected head as CSV…", "csv-head"),
                            ("Selected head as .npz…", "npz-head"), ("All heads as .npz…", "npz-all"),
                            ("All heads as CSV (long)…", "csv-all"), ("All heads as JSON…", "json")):
            menu.addAction(label, lambda w=what: self._export_dialog(w))
        self.export_button.setMenu(menu)
        self.export_button.setEnabled(False)
        options = QHBoxLayout()
        for widget in (QLabel("Show"), self.source, self.hide_special, self.renormalise, QLabel("Quadrant"),
                       self.quadrant, QLabel("Colours"), self.colours):
            options.addWidget(widget)
        options.addStretch(1)
        options.addWidget(self.export_button)
        # views
        self.views = QTabWidget()
        self.grid = AttentionGrid()
        self.grid.clicked.connect(self._grid_clicked)
        self.grid.setToolTip("Layers by row, heads by column; each cell scaled to its own maximum. Click to open.")
        self.views.addTab(self.grid, "Model view")
        self.detail_page = QWidget()
        self.layer = QSpinBox()
        self.layer.setPrefix("layer ")
        self.head = QSpinBox()
        self.head.setPrefix("head ")
        self.heatmap = AttentionHeatmap()
        self.heatmap.arrow.connect(self.move_by)
        self.readout = QLabel("Hover the heatmap: query -> key: weight")
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.heatmap.hovered.connect(self.readout.setText)
        detail_bar = QHBoxLayout()
        detail_bar.addWidget(self.layer)
        detail_bar.addWidget(self.head)
        detail_bar.addWidget(QLabel("(arrow keys: ←/→ head, ↑/↓ layer)"))
        detail_bar.addStretch(1)
        detail_bar.addWidget(self.readout)
        detail_layout = QVBoxLayout(self.detail_page)
        detail_layout.setContentsMargins(0, 0, 0, 0)
        detail_layout.addLayout(detail_bar)
        detail_layout.addWidget(self.heatmap, 1)
        self.views.addTab(self.detail_page, "Detail")
        self.head_page = QWidget()
        self.head_list = QListWidget()
        self.head_list.setMaximumWidth(110)
        self.head_list.itemChanged.connect(lambda _item: self._draw_head_view())
        self.head_view = HeadView()
        self.head_readout = QLabel("Hover a token to see only its lines")
        self.head_view.hovered.connect(self.head_readout.setText)
        head_layout = QHBoxLayout(self.head_page)
        head_side = QVBoxLayout()
        head_side.addWidget(QLabel("Heads"))
        head_side.addWidget(self.head_list)
        head_layout.addLayout(head_side)
        head_main = QVBoxLayout()
        head_main.addWidget(self.head_readout)
        head_main.addWidget(self.head_view, 1)
        head_layout.addLayout(head_main, 1)
        self.views.addTab(self.head_page, "Head view")
        self.stats = QTableWidget(0, 2 + len(STAT_COLUMNS))
        self.stats.setHorizontalHeaderLabels(["layer", "head", *(STAT_TITLES[c] for c in STAT_COLUMNS)])
        self.stats.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.stats.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.stats.setSortingEnabled(True)
        self.stats.cellClicked.connect(self._stats_clicked)
        self.stats.setToolTip("Averages over query tokens. Sort by a column; click a row to open that head.")
        self.views.addTab(self.stats, "Statistics")
        self.compare_page = QWidget()
        self.compare_summary = AttentionHeatmap()  # layers x heads, mean |B - A|
        self.compare_summary.plot.setLabel("left", "layer")
        self.compare_summary.plot.setLabel("bottom", "head")
        self.compare_summary.describe = self._describe_summary_cell
        self.compare_summary.clicked.connect(self.open_difference)
        self.compare_summary.arrow.connect(self._move_difference)
        self.compare_diff = AttentionHeatmap()  # B - A of one head, diverging colours around 0
        self.compare_diff.set_colormap(DIVERGING)
        self.compare_diff.describe = self._describe_difference
        self.compare_diff.arrow.connect(self._move_difference)
        self.compare_info = QLabel("Tick “Compare with…”, choose a second model and run: "
                                   "B - A per head shows here.")
        self.compare_info.setWordWrap(True)
        self.compare_readout = QLabel("Hover a cell")
        self.compare_readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.compare_summary.hovered.connect(self.compare_readout.setText)
        self.compare_diff.hovered.connect(self.compare_readout.setText)
        self.compare_head: tuple[int, int] | None = None
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.compare_summary)
        splitter.addWidget(self.compare_diff)
        splitter.setSizes([350, 650])
        compare_layout = QVBoxLayout(self.compare_page)
        compare_layout.setContentsMargins(0, 0, 0, 0)
        compare_layout.addWidget(self.compare_info)
        compare_layout.addWidget(splitter, 1)
        compare_layout.addWidget(self.compare_readout)
        self.views.addTab(self.compare_page, "Compare")
        self.views.currentChanged.connect(lambda _i: self._draw_head_view())
        self.note = QLabel()
        self.note.setStyleSheet("QLabel { color: #555; }")

        self.body.addWidget(self.text)
        self.body.addLayout(row)
        self.body.addWidget(self.compare_source)
        self.body.addLayout(options)
        self.body.addWidget(self.views, 1)
        self.body.addWidget(self.note)
        for signal in (self.layer.valueChanged, self.head.valueChanged, self.source.currentIndexChanged):
            signal.connect(lambda _v: self.show_detail())
        for signal in (self.hide_special.toggled, self.renormalise.toggled, self.quadrant.currentIndexChanged):
            signal.connect(lambda _v: self.redraw())
        self.colours.currentTextChanged.connect(self._colours_changed)
        self.runner.started.connect(lambda: self.cancel_button.setEnabled(True))
        self.runner.finished.connect(lambda: self.cancel_button.setEnabled(False))
        self.runner.result.connect(self.show_result)
        self.runner.progress.connect(self._progress)
        self.runner.cancelled.connect(lambda: self.show_message("Cancelled."))

    # -- input -----------------------------------------------------------------------------
    def model_loaded(self, info: ModelInfo) -> None:
        self.status.emit(f"Attention: {info.layers} layers x {info.heads} heads, eager attention")

    def _example_chosen(self, index: int) -> None:
        line = self.examples.itemData(index)
        if line:
            text, _sep, pair = line.partition(PAIR_SEPARATOR)
            self.text.setPlainText(text.strip())
            self.pair.setText(pair.strip())
        self.examples.setCurrentIndex(0)

    def run(self) -> None:
        pair = self.pair.text().strip() or None
        compare_source = self.compare_source.source()
        if self.compare_source.enabled.isChecked() and not compare_source:
            self.show_message("Choose the second model to compare with, or untick “Compare with…”.", error=True)
            return
        info = self.model_info
        cell_max = self.grid.cell_pixels(info.layers, info.heads + 1) if info is not None and info.layers else CELL_MAX
        self.run_job(attention_job, self.text.toPlainText(), pair, compare_source, cell_max)

    # -- output ----------------------------------------------------------------------------
    @property
    def result(self) -> AttentionResult | None:
        return self.bundle.result if self.bundle else None

    def options(self) -> ViewOptions:
        pair = self.result is not None and self.result.b_start is not None
        return ViewOptions(hide_special=self.hide_special.isChecked(), renormalise=self.renormalise.isChecked(),
                           quadrant=self.quadrant.currentText() if pair else "all")

    def _progress(self, event: object) -> None:
        payload = getattr(event, "payload", None)
        if isinstance(payload, GridStage):
            self.show_stage(payload)

    def _prepare(self, result: AttentionResult) -> None:
        """Selectors and lists that depend on the model's shape and the input."""
        self._updating = True
        self.layer.setRange(0, result.layers - 1)
        self.head.setRange(0, result.heads - 1)
        self.quadrant.setEnabled(result.b_start is not None)
        if self.head_list.count() != result.heads:
            self.head_list.blockSignals(True)
            self.head_list.clear()
            for head in range(result.heads):
                item = QListWidgetItem(f"head {head}")
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked if head == 0 else Qt.CheckState.Unchecked)
                self.head_list.addItem(item)
            self.head_list.blockSignals(False)
        self._updating = False

    def show_stage(self, stage: GridStage) -> None:
        """The forward pass is done: draw the grid (and the detail view) before any statistics."""
        self.bundle = AttentionBundle(stage.result, None, None, None, stage.thumbnails)
        self._prepare(stage.result)
        self.stats.setRowCount(0)
        self.redraw()
        self.status.emit(f"Attention: {stage.result.length} tokens drawn; computing statistics…")

    def show_result(self, bundle: AttentionBundle) -> None:
        staged = self.bundle is not None and self.bundle.result is bundle.result
        self.bundle = bundle
        result = bundle.result
        if staged:  # the grid is up already; only what needed the aggregates changes
            if self.source.currentText() != "head":
                self.show_detail()
        else:
            self._prepare(result)
            self.redraw()
        self._fill_statistics(bundle.statistics)
        self._show_comparison(bundle.comparison)
        self.export_button.setEnabled(True)
        notes = [n for n in (result.truncation.message if result.truncation else "", result.note) if n]
        if bundle.comparison is not None and bundle.comparison.message:
            notes.append(bundle.comparison.message)
        self.show_message("\n".join(notes))
        self.status.emit(f"Attention: {result.layers} x {result.heads} heads over {result.length} tokens")

    def redraw(self) -> None:
        """Everything that depends on the view options: grid, detail, head view."""
        if self.bundle is None:
            return
        self.draw_grid()
        self.show_detail()
        self._draw_head_view()
        if self.compare_head is not None:
            self.open_difference(*self.compare_head)
        described = self.options().describe()
        self.note.setText(f"{self.result.length} tokens · {described}" if described else f"{self.result.length} tokens")

    def _view_tokens(self) -> tuple[list[str], list[str], object]:
        result = self.result
        view = make_view(result, self.options())
        tokens = np.array(result.tokens, dtype=object)
        return list(tokens[view.rows]), list(tokens[view.cols]), view

    def _identity(self, view: object) -> bool:
        return len(view.rows) == len(view.cols) == self.result.length and not view.renormalise

    def draw_grid(self) -> None:
        bundle = self.bundle
        _q, _k, view = self._view_tokens()
        labels = [f"H{h}" for h in range(bundle.result.heads)] + ["mean"]
        if self._identity(view):
            self.grid.set_cells(bundle.thumbnails, labels)
        else:
            cell_max = self.grid.cell_pixels(bundle.result.layers, bundle.result.heads + 1)
            self.grid.set_cells(with_mean_column(pooled(view.apply(bundle.result.attentions), cell_max)), labels)

    def current_matrix(self) -> tuple[np.ndarray, list[str], list[str], str]:
        """The matrix the detail view shows, after the view options, with its labels and title."""
        bundle = self.bundle
        layer, head, source = self.layer.value(), self.head.value(), self.source.currentText()
        if source == "head":
            full, title = bundle.result.attentions[layer, head], f"layer {layer}, head {head}"
        elif source == "layer mean":
            full = bundle.mean[layer] if bundle.mean is not None else bundle.result.attentions[layer].mean(axis=0)
            title = f"layer {layer}, mean over heads"
        else:
            if bundle.rollout is None:  # asked for before the worker finished: compute it here, once
                from bertstudio.core.tasks.attention import rollout

                self.bundle = bundle = replace(bundle, rollout=rollout(bundle.result.attentions))
            full, title = bundle.rollout[layer], f"rollout up to layer {layer}"
        queries, keys, view = self._view_tokens()
        matrix = full if self._identity(view) else view.apply(full)
        return matrix, queries, keys, title

    def show_detail(self) -> None:
        if self.bundle is None or self._updating:
            return
        self.head.setEnabled(self.source.currentText() == "head")
        matrix, queries, keys, title = self.current_matrix()
        self.heatmap.set_matrix(matrix, queries, keys, title)

    def open_head(self, layer: int, head: int | None) -> None:
        """Show one head (or, with head None, the layer mean) in the detail view."""
        self._updating = True
        self.source.setCurrentText("head" if head is not None else "layer mean")
        self.layer.setValue(layer)
        if head is not None:
            self.head.setValue(head)
        self._updating = False
        self.show_detail()
        self.views.setCurrentWidget(self.detail_page)
        self.heatmap.setFocus()

    def move_by(self, layers: int, heads: int) -> None:
        """Arrow keys: the next/previous head, wrapping into the next/previous layer."""
        if self.bundle is None:
            return
        count = self.result.heads
        index = (self.layer.value() * count + self.head.value() + heads + layers * count) % (self.result.layers * count)
        self._updating = True
        self.layer.setValue(index // count)
        self.head.setValue(index % count)
        self._updating = False
        self.show_detail()

    def _grid_clicked(self, layer: int, column: int) -> None:
        self.open_head(layer, column if column < self.result.heads else None)

    def _stats_clicked(self, row: int, _column: int) -> None:
        layer = int(self.stats.item(row, 0).data(Qt.ItemDataRole.UserRole))
        head = int(self.stats.item(row, 1).data(Qt.ItemDataRole.UserRole))
        self.open_head(layer, head)

    def _fill_statistics(self, statistics: HeadStatistics) -> None:
        self.stats.setSortingEnabled(False)
        rows = statistics.rows()
        self.stats.setRowCount(len(rows))
        for r, (layer, head, *values) in enumerate(rows):
            self.stats.setItem(r, 0, _NumberItem(layer, str(layer)))
            self.stats.setItem(r, 1, _NumberItem(head, str(head)))
            for c, value in enumerate(values, start=2):
                self.stats.setItem(r, c, _NumberItem(value, f"{value:.3f}"))
        self.stats.setSortingEnabled(True)
        self.stats.resizeColumnsToContents()

    def _draw_head_view(self) -> None:
        if self.bundle is None or self.views.currentWidget() is not self.head_page:
            return
        queries, keys, view = self._view_tokens()
        layer = self.layer.value()
        heads = [i for i in range(self.head_list.count())
                 if self.head_list.item(i).checkState() == Qt.CheckState.Checked]
        full = self.result.attentions[layer]
        matrices = [(h, full[h] if self._identity(view) else view.apply(full[h])) for h in heads]
        self.head_view.set_heads(queries, keys, matrices)
        self.head_readout.setText(f"layer {layer}, heads {', '.join(map(str, heads)) or 'none'}: "
                                  "hover a token to see only its lines")

    # -- compare ---------------------------------------------------------------------------
    def _show_comparison(self, comparison: AttentionComparison | None) -> None:
        self.compare_head = None
        if comparison is None:
            self.compare_info.setText("Tick “Compare with…”, choose a second model and run: B - A per head shows here.")
            self.compare_summary.set_matrix(np.zeros((0, 0), dtype=np.float32), [], [])
            self.compare_diff.set_matrix(np.zeros((0, 0), dtype=np.float32), [], [])
            return
        if comparison.diff is None:
            self.compare_info.setText(f"<b>B</b> {comparison.source}: {comparison.message}")
            self.compare_summary.set_matrix(np.zeros((0, 0), dtype=np.float32), [], [])
            self.compare_diff.set_matrix(np.zeros((0, 0), dtype=np.float32), [], [])
            return
        diff = comparison.diff
        layers, heads = diff.mean_abs.shape
        most = ", ".join(f"L{lay} H{hd} ({value:.3f})" for lay, hd, value in diff.most_changed(3))
        self.compare_info.setText(
            f"<b>A</b> {self.model_request().source if self.model_request() else 'model A'} vs "
            f"<b>B</b> {comparison.source}: mean |B − A| per head (left; click a head), "
            f"B − A of that head (right; red: B attends more). Most changed: {most}."
        )
        self.compare_summary.set_matrix(diff.mean_abs, [f"L{i}" for i in range(layers)],
                                        [f"H{h}" for h in range(heads)], "mean |B − A| per head")
        layer, head, _value = diff.most_changed(1)[0]
        self.open_difference(layer, head)

    def open_difference(self, layer: int, head: int) -> None:
        """Show B - A of one head (after the view options), on a symmetric diverging scale."""
        comparison = self.bundle.comparison if self.bundle else None
        if comparison is None or comparison.diff is None:
            return
        self.compare_head = (layer, head)
        queries, keys, view = self._view_tokens()
        if self._identity(view):
            matrix = comparison.diff.difference[layer, head]
        else:  # the difference of what is shown (renormalised rows included)
            matrix = (view.apply(comparison.result.attentions[layer, head])
                      - view.apply(self.result.attentions[layer, head]))
        top = float(np.abs(matrix).max()) if matrix.size else 0.0
        top = top if top > 0 else 1e-6
        self.compare_diff.set_matrix(matrix, queries, keys, f"B − A, layer {layer}, head {head}", levels=(-top, top))

    def _move_difference(self, layers: int, heads: int) -> None:
        if self.compare_head is None or self.result is None:
            return
        count = self.result.heads
        index = (self.compare_head[0] * count + self.compare_head[1] + heads + layers * count) % (
            self.result.layers * count)
        self.open_difference(index // count, index % count)

    def _describe_summary_cell(self, _q: str, _k: str, value: float, layer: int, head: int) -> str:
        diff = self.bundle.comparison.diff if self.bundle and self.bundle.comparison else None
        top = f" (largest {diff.max_abs[layer, head]:.4f})" if diff is not None else ""
        return f"layer {layer}, head {head}: mean |B − A| = {value:.4f}{top}; click to open"

    def _describe_difference(self, query: str, key: str, value: float, row: int, column: int) -> str:
        text = f"{query} -> {key}: B − A = {value:+.4f}"
        comparison = self.bundle.comparison if self.bundle else None
        if comparison is not None and self.compare_head is not None:
            queries, keys, view = self._view_tokens()
            layer, head = self.compare_head
            q, k = int(view.rows[row]), int(view.cols[column])
            text += (f" (A {self.result.attentions[layer, head, q, k]:.4f}, "
                     f"B {comparison.result.attentions[layer, head, q, k]:.4f})")
        return text

    def _colours_changed(self, name: str) -> None:
        self.heatmap.set_colormap(name)
        self.grid.set_colormap(name)

    # -- export ----------------------------------------------------------------------------
    def _export_dialog(self, what: str) -> None:
        filters = {"png": "PNG image (*.png)", "csv-head": "CSV (*.csv)", "csv-all": "CSV (*.csv)",
                   "npz-head": "NumPy (*.npz)", "npz-all": "NumPy (*.npz)", "json": "JSON (*.json)"}
        path, _ = QFileDialog.getSaveFileName(self, "Export attention", "", filters[what])
        if path:
            self.export(Path(path), what)

    def export(self, path: Path, what: str) -> None:
        """Write the current view (png), the detail matrix (csv-head / npz-head) or all heads."""
        from bertstudio.core.tasks import attention_export as export

        if self.bundle is None:
            self.show_message("Nothing to export yet: show some attention first.", error=True)
            return
        try:
            if what == "png":
                if not self.views.currentWidget().grab().save(str(path)):
                    raise OSError(f"could not write {path}")
            elif what == "csv-head":
                matrix, queries, keys, _title = self.current_matrix()
                export.save_matrix_csv(path, matrix, queries, keys)
            elif what == "npz-head":
                export.save_npz(path, self.result, self.layer.value(), self.head.value())
            elif what in ("npz-all", "csv-all", "json"):
                export.save(path.with_suffix({"npz-all": ".npz", "csv-all": ".csv", "json": ".json"}[what]),
                            self.result)
            else:
                raise ValueError(what)
        except OSError as error:
            self.show_message(f"Could not write {path}: {error}", error=True)
            return
        self.status.emit(f"Attention: exported to {path}")
