"""Attention tab: model view (all heads), detail view (one head), head view (lines), neuron view
(queries and keys of one head), statistics, compare; weights or value-weighted norms in each.
A view on the template tab: it writes its inputs, how a result is drawn, and its state.

What the person chose lives in one observable `AttentionViewState` (core); the controls write
it and the views subscribe to it, so no view reaches into another.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel, QLineEdit, QPlainTextEdit, QPushButton, QTabWidget, QVBoxLayout, QWidget

from bertstudio.core.models import ModelInfo
from bertstudio.core.tasks.attention import AttentionInput, AttentionResult
from bertstudio.core.tasks.attention.bundle import AttentionBundle, GridStage, attention_job, grid_cells
from bertstudio.core.tasks.attention.state import VIEW_FIELDS, AttentionViewState
from bertstudio.resources import examples
from bertstudio.ui import theme
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.attention_compare import ComparePage
from bertstudio.ui.widgets.attention_corpus import CorpusPage
from bertstudio.ui.widgets.attention_export_bar import ExportBar
from bertstudio.ui.widgets.attention_grid import AttentionGrid
from bertstudio.ui.widgets.attention_neuron import NeuronPage
from bertstudio.ui.widgets.attention_options import ViewOptions
from bertstudio.ui.widgets.attention_pages import DetailPage, HeadPage, StatisticsTable, readout_label
from bertstudio.ui.widgets.elided_label import ElidedLabel
from bertstudio.ui.widgets.flow_layout import FlowLayout, group, wrapping_row
from bertstudio.ui.widgets.layouts import column

PAIR_SEPARATOR = " ||| "
EMPTY_HEADS: tuple[tuple[int, int], ...] = ()


class AttentionTab(TaskTab):
    SPEC_KEY = "attention"
    BOUND = {"text": "text", "pair": "pair", "view": "view_state"}  # the workspace binds these by name
    RUN_LABEL = "Show attention"

    heads_selected = Signal(object)  # tuple of (layer, head): the grid's selection changed (Ctrl+click)
    heads_off_requested = Signal(object)  # the selection, sent to the other task tabs' "Heads off" on request

    # -- inputs ----------------------------------------------------------------------------
    def build_inputs(self, box: QVBoxLayout) -> None:
        self.view_state = AttentionViewState()
        self.bundle: AttentionBundle | None = None
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText("Sentence A: the text whose attention you want to see…")
        self.text.setMaximumHeight(36)
        self.pair = QLineEdit()
        self.pair.setPlaceholderText("Sentence B (optional): a second sentence, to study A↔B attention")
        box.addWidget(self.text)
        box.addWidget(self.pair)
        self.explain_button.setVisible(False)  # token attributions explain a task's output, not attention

    def inputs(self) -> AttentionInput:
        """The tab always captures queries, keys and values (neuron view) and what norms need: the
        same forward pass, a few per cent more work, and the weighting toggle never runs the model."""
        return AttentionInput(self.text.toPlainText(), self.pair.text().strip() or None, qk=True, norms=True,
                              norm_sum=True)

    def set_inputs(self, inputs: AttentionInput) -> None:
        self.text.setPlainText(inputs.text)
        self.pair.setText(inputs.pair or "")

    def examples(self) -> list[tuple[str, Any]]:
        out = []
        for line in examples("attention"):
            text, _sep, pair = line.partition(PAIR_SEPARATOR)
            out.append((line.replace(PAIR_SEPARATOR, "  |  "), AttentionInput(text.strip(), pair.strip() or None)))
        return out

    def job(self) -> Any:
        info = self.model_info
        cell_max = self.grid.cell_pixels(info.layers, info.heads + 1) if info and info.layers and info.heads else 128
        return functools.partial(attention_job, cell_max=cell_max)

    def model_loaded(self, info: ModelInfo) -> None:
        self.status.emit(f"Attention: {info.layers} layers x {info.heads} heads, eager attention")

    # -- results ---------------------------------------------------------------------------
    def build_results(self, box: QVBoxLayout) -> None:
        state = self.view_state
        self.view_options = ViewOptions(state)
        self.export_bar = ExportBar(self, self)
        self.export_button = self.export_bar.button
        self.detail_page = DetailPage(state)
        self.note = ElidedLabel()  # a long note is elided, never widens the window
        theme.follow(self.note, lambda c: f"QLabel {{ color: {c.secondary}; }}")
        # A flow, not a row: eleven options in one row held the tab at 1,156 pixels; they wrap instead.
        flow, o = FlowLayout(), self.view_options
        for widgets in ((QLabel("Show"), o.weighting, o.source), (self.detail_page.layer, self.detail_page.head),
                        (o.hide_special, o.renormalise), (QLabel("Quadrant"), o.quadrant),
                        (QLabel("Colours"), o.colours), (self.note, self.export_bar)):
            flow.addWidget(group(*widgets))
        box.addWidget(wrapping_row(flow))
        box.addWidget(self._build_views(state), 1)
        # the names the tests and the window use
        self.source, self.hide_special, self.quadrant = o.source, o.hide_special, o.quadrant
        self.weighting, self.colours = o.weighting, o.colours
        self.layer, self.head, self.heatmap = self.detail_page.layer, self.detail_page.head, self.detail_page.heatmap
        self.readout = self.detail_page.readout
        self.head_view, self.head_list = self.head_page.head_view, self.head_page.head_list
        self.head_readout = self.head_page.readout
        self.compare_summary, self.compare_diff = self.compare_page.summary, self.compare_page.diff
        self.compare_info, self.compare_readout = self.compare_page.info, self.compare_page.readout
        self.open_difference = self.compare_page.open_difference
        state.subscribe(lambda _c: self._draw_grid(), only=VIEW_FIELDS)
        state.subscribe(lambda _c: self.grid.set_colormap(state.colours), only={"colours"})
        state.subscribe(lambda _c: self._show_selection(), only={"selected"})
        state.subscribe(lambda _c: self._describe(), only=VIEW_FIELDS)
        self.runner.progress.connect(self._progress)
        self._add_shortcuts()
        self._show_selection()

    def _build_views(self, state: AttentionViewState) -> QTabWidget:
        """The pages: model view (the grid and the heads selected), detail, head, neuron, statistics,
        compare and corpus; the detail view's readout in the pages' corner."""
        self.views = QTabWidget()
        self.grid = AttentionGrid()
        self.grid.clicked.connect(self._grid_clicked)
        self.grid.ctrl_clicked.connect(self._grid_ctrl_clicked)
        self.grid.setToolTip("Layers by row, heads by column; each cell scaled to its own maximum. "
                             "Click to open a head; Ctrl+click to select heads to switch off.")
        self.selection = readout_label("")
        self.clear_selection = QPushButton("Clear selection")
        self.clear_selection.clicked.connect(lambda: state.update(selected=EMPTY_HEADS))
        self.send_heads = QPushButton("Switch these heads off in the task tabs")
        self.send_heads.setToolTip("Fill-mask, NSP, NER, QA, Classification and Multiple choice then run intact "
                                   "and with these heads off; each tab's Heads off field says so and can be cleared")
        self.send_heads.clicked.connect(lambda: self.heads_off_requested.emit(self.view_state.selected))
        self.grid_page = column(self.grid, group(self.selection, self.clear_selection, self.send_heads,
                                                 stretch_first=True), stretch=0)
        self.head_page, self.neuron_page = HeadPage(state), NeuronPage(state)
        self.stats = StatisticsTable(state)
        self.stats.cellClicked.connect(lambda row, _column: self.open_head(*self.stats.head_at(row)))
        self.compare_page = ComparePage(state)
        for page, title in ((self.grid_page, "Model view"), (self.detail_page, "Detail"), (self.head_page, "Head view"),
                            (self.neuron_page, "Neuron view"), (self.stats, "Statistics"),
                            (self.compare_page, "Compare"), (CorpusPage(self), "Corpus")):
            self.add_page(page, title)
        self.views.currentChanged.connect(self._page_changed)
        self.detail_page.readout.setMinimumWidth(480)
        self.views.setCornerWidget(self.detail_page.readout, Qt.Corner.TopRightCorner)
        self.detail_page.readout.setVisible(False)
        return self.views

    def _add_shortcuts(self) -> None:
        for keys, move, what in (("]", (0, 1), "Next head"), ("[", (0, -1), "Previous head"),
                                 ("Alt+Right", (0, 1), "Next head"), ("Alt+Left", (0, -1), "Previous head"),
                                 ("Alt+Down", (1, 0), "Next layer"), ("Alt+Up", (-1, 0), "Previous layer")):
            shortcut = QShortcut(QKeySequence(keys), self, functools.partial(self._move, *move),
                                 context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.setWhatsThis(what)

    def add_page(self, page: QWidget, title: str) -> None:
        """Another page among the views (a corpus search, say), after the existing ones."""
        self.views.addTab(page, title)

    def _page_changed(self, _index: int) -> None:
        self.detail_page.readout.setVisible(self.views.currentWidget() is self.detail_page)
        self.head_page.became_current()
        self.neuron_page.became_current()

    @property
    def compare_head(self) -> tuple[int, int] | None:
        return self.compare_page.head

    def _progress(self, event: object) -> None:
        payload = getattr(event, "payload", None)
        if isinstance(payload, GridStage):
            self.show_stage(payload)

    def _prepare(self, result: AttentionResult) -> None:
        """A new result: the state keeps the choices that still exist for this model and input."""
        self.quadrant.setEnabled(result.b_start is not None)
        self.head_page.set_heads(result.heads)
        with self.view_state.batch():
            self.view_state.set_shape(result.layers, result.heads)
            self.view_state.update(focus=None)

    def show_stage(self, stage: GridStage) -> None:
        """The forward pass is done: draw the grid (and the detail view) before any statistics."""
        self._prepare(stage.result)
        self._show(AttentionBundle(stage.result, None, None, None, stage.thumbnails,
                                   norm_thumbnails=stage.norm_thumbnails))
        self.stats.fill(None)
        self.status.emit(f"Attention: {stage.result.length} tokens drawn; computing statistics…")

    def show_outcome(self, outcome: Any) -> None:
        bundle: AttentionBundle = outcome
        if self.bundle is None or self.bundle.result is not bundle.result:
            self._prepare(bundle.result)
        self._show(bundle)
        self.stats.fill(bundle.statistics)
        request = self.model_request()
        self.compare_page.set_bundle(bundle, request.source if request else "")
        self.export_bar.setEnabled(True)
        result = bundle.result
        self.status.emit(f"Attention: {result.layers} x {result.heads} heads over {result.length} tokens")

    def _show(self, bundle: AttentionBundle) -> None:
        self.bundle = bundle
        self._draw_grid()
        for page in (self.detail_page, self.head_page, self.neuron_page):
            page.set_bundle(bundle)
        self._describe()

    def clear_result(self) -> None:
        self.bundle = None
        self.grid.show_empty()  # the model view too: no cells of a result that is gone
        for page in (self.detail_page, self.head_page, self.neuron_page):
            page.set_bundle(None)
        self.compare_page.set_bundle(None)
        self.stats.fill(None)
        self.export_bar.setEnabled(False)
        self.note.setText("")

    def _draw_grid(self) -> None:
        bundle = self.bundle
        if bundle is None:
            return
        result = bundle.result
        settings = self.view_state.settings
        norms = settings.norms and bundle.norm_thumbnails is not None
        cells = grid_cells(bundle, settings.options(result.b_start is not None),
                           self.grid.cell_pixels(result.layers, result.heads + 1), norms)
        self.grid.set_cells(cells, [f"H{h}" for h in range(result.heads)] + ["sum" if norms else "mean"])

    def _describe(self) -> None:
        if self.bundle is None:
            return
        length = self.bundle.result.length
        settings = self.view_state.settings
        described = settings.options(self.bundle.result.b_start is not None).describe()
        if settings.norms:
            described = "; ".join(p for p in ("norms ||αf(x)||, each cell its own scale", described) if p)
        self.note.setText(f"{length} tokens · {described}" if described else f"{length} tokens")

    # -- navigation and head selection -----------------------------------------------------
    def open_head(self, layer: int, head: int | None) -> None:
        """Show one head (or, with head None, the layer mean) in the detail view."""
        with self.view_state.batch():
            self.view_state.update(source="head" if head is not None else "layer mean", layer=layer)
            if head is not None:
                self.view_state.update(head=head)
        self.views.setCurrentWidget(self.detail_page)
        self.heatmap.setFocus()

    def _move(self, layers: int, heads: int) -> None:
        if self.views.currentWidget() is self.compare_page:
            self.compare_page.step(layers, heads)
        else:
            self.view_state.move(layers, heads)

    def _grid_clicked(self, layer: int, column: int) -> None:
        """A plain click only opens the head: selecting heads to switch off takes Ctrl."""
        heads = self.bundle.result.heads if self.bundle else 0
        self.open_head(layer, column if column < heads else None)

    def _grid_ctrl_clicked(self, layer: int, column: int) -> None:
        if self.bundle is not None and column < self.bundle.result.heads:
            self.view_state.toggle_selected(layer, column, add=True)

    def _show_selection(self) -> None:
        selected = self.view_state.selected
        self.grid.set_selected(selected)
        self.clear_selection.setEnabled(bool(selected))
        self.send_heads.setEnabled(bool(selected))
        self.selection.setText(
            "Heads selected: " + ", ".join(f"L{layer} H{head}" for layer, head in selected)
            if selected else "Click a head to open it; Ctrl+click heads to select them to switch off.")
        self.heads_selected.emit(selected)

    # -- export ----------------------------------------------------------------------------
    def export(self, path: Path, what: str) -> None:
        """png / csv-head / npz-head here (small); all heads (npz-all, csv-all, json) in a worker."""
        self.export_bar.export(Path(path), what)
