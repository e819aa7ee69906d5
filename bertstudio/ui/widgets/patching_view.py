"""Trace why: the pinned input (clean) and the edit shown (corrupted), patched layer by layer.

Two heatmaps on one fixed 0-1 scale: the hidden states (layers x token positions, the edited
positions marked) and the attention heads (layers x heads, plus every head of a layer at once).
A cell shows either the share of the clean answer it restores ((patched - corrupted) / (clean -
corrupted)) or the raw target probability; hovering says it in words. The job runs on the
project's TaskRunner with progress and Cancel per heatmap row; Export writes PNG, SVG or JSON (the
CLI's `patch --json`), Copy as Python a hooks-only script for the cell last hovered.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QComboBox, QFileDialog, QLabel, QLineEdit, QPushButton, QWidget

from bertstudio.core.errors import BertStudioError
from bertstudio.core.notes import Note
from bertstudio.ui.screen_fit import PageLayout, scroll_body
from bertstudio.ui.tabs.frame import error_note
from bertstudio.ui.tabs.run_lifecycle import JobDialog, RunLifecycle
from bertstudio.ui.widgets.forms import spin_box
from bertstudio.ui.widgets.labelled_matrix import LabelledMatrix, short
from bertstudio.ui.widgets.layouts import row, splitter
from bertstudio.ui.widgets.notes_area import NotesArea
from bertstudio.ui.widgets.run_controls import ProgressLine
from bertstudio.workers.runner import TaskRunner

RESTORED, PROBABILITY = "restored", "probability"
SHOWN = {RESTORED: "Share of the clean answer restored", PROBABILITY: "Target probability"}
METHODS = {"exact": "Exact patching", "attribution": "Attribution patching (fast estimate)"}
EDIT, NOISE = "edit", "noise"  # what corrupts the pinned input
MAX_SEED = 2**31 - 1
MAX_POSITION = 100_000  # as `bertstudio patch --noise`
TARGET_TIP = ("What the trace restores, as `explain --target` takes it (empty: the clean prediction): "
              "classification a label; next sentence is_next or not_next; fill-mask a token; NER a token index, "
              "optionally INDEX:LABEL; QA start or end of the best answer; multiple choice an index or the ending")
PYTHON_TIP = "A hooks-only transformers script that reproduces the cell last hovered"
NOISE_SCRIPT = "Copy as Python reproduces an edit, not noise: `bertstudio patch --noise` gives these numbers"


class PatchHeatmap(LabelledMatrix):
    """A rows x columns grid on the matrix's fixed scale, row and column labels apart; `words(row,
    column)` is the tooltip (and what `hovered` reports)."""

    def __init__(self, caption: str, axes: tuple[str, str], parent: QWidget | None = None) -> None:
        super().__init__((0.0, 1.0), "viridis", caption, 160, axes, parent)
        self.rows: tuple[str, ...] = ()
        self.columns: tuple[str, ...] = ()
        self.words: Callable[[int, int], str] = lambda _row, _column: ""
        self.hovered: Callable[[int, int, str], None] = lambda _row, _column, _text: None
        self.plot.scene().sigMouseMoved.connect(self._moved)
        self.show_grid([], [], [], [], self.words)  # before a trace: 0-1 and no tick numbers, not pyqtgraph's ±0.4

    def show_grid(self, rows: Sequence[str], columns: Sequence[str], values: Any, written: Sequence[Sequence[str]],
                  words: Callable[[int, int], str]) -> None:
        import numpy as np
        import pyqtgraph as pg

        for text in self.texts:
            self.plot.removeItem(text)
        self.texts = []
        self.rows, self.columns, self.words = tuple(rows), tuple(columns), words
        shades = np.asarray(values, dtype=np.float32).reshape(len(self.rows), len(self.columns))
        self.image.setImage(shades, levels=self.levels, autoLevels=False)
        item = self.plot.getPlotItem()
        item.getAxis("left").setTicks([[(i + 0.5, short(label)) for i, label in enumerate(self.rows)]])
        item.getAxis("bottom").setTicks([[(i + 0.5, short(label, 10)) for i, label in enumerate(self.columns)]])
        if shades.size <= self.max_written:
            for row in range(len(self.rows)):
                for column in range(len(self.columns)):
                    shade = shades[row, column]
                    text = pg.TextItem(written[row][column], color="k" if shade > 0.6 else "w", anchor=(0.5, 0.5))
                    text.setPos(column + 0.5, row + 0.5)
                    self.plot.addItem(text)
                    self.texts.append(text)
        item.setRange(xRange=(0, max(1, len(self.columns))), yRange=(0, max(1, len(self.rows))),
                      padding=0.02 if shades.size else 0)

    def cell_at(self, scene_position: Any) -> tuple[int, int] | None:
        point = self.plot.getPlotItem().vb.mapSceneToView(scene_position)
        row, column = int(point.y()), int(point.x())
        if point.x() < 0 or point.y() < 0 or not (row < len(self.rows) and column < len(self.columns)):
            return None
        return row, column

    def _moved(self, scene_position: Any) -> None:
        cell = self.cell_at(scene_position)
        text = self.words(*cell) if cell is not None else ""
        self.plot.setToolTip(text)
        if cell is not None:
            self.hovered(cell[0], cell[1], text)


class PatchingPanel(JobDialog):
    """`source()` gives (LoadRequest or None, task key, pinned texts, edit texts, the edit's label) or
    raises BertStudioError (the pinned compare's source, as Explain A and B reads it)."""

    def __init__(self, source: Callable[[], tuple[Any, str, tuple[str, ...], tuple[str, ...], str]],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = source
        self.result: Any = None
        self.request: Any = None
        self.texts: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        self.corrupted_by = "the edit"  # what the shown trace's corrupted run was
        self.chosen: tuple[str, int, int] | None = None  # ("state" | "head", row, column) last hovered
        self.setWindowTitle("Trace why — which layer, position and head carry the pinned answer")
        self.resize(1000, 720)
        self.runner = TaskRunner(self)
        self._build_options()
        self.trace_button = QPushButton("Trace")
        self.trace_button.setToolTip("Patch every cell (Ctrl+Enter)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Cancel (Esc)")
        self.cancel_button.setEnabled(False)
        self.export_button = QPushButton("Export…")
        self.export_button.setToolTip("The heatmaps as PNG or SVG, the numbers as JSON (as `bertstudio patch --json`)")
        self.python_button = QPushButton("Copy as Python")
        self.python_button.setToolTip(PYTHON_TIP)
        for button in (self.export_button, self.python_button):
            button.setEnabled(False)
        self.progress = ProgressLine()
        self.notes = NotesArea(one_line=True)
        self._build_view()
        self.export_button.clicked.connect(self.export)
        self.python_button.clicked.connect(self.copy_python)
        # Run/Cancel/progress/"Cancelled." as every tab has them; Esc is JobDialog's (closes when idle)
        self.lifecycle = RunLifecycle(self, self.runner, self.refresh, self.trace_button, self.cancel_button,
                                      self.progress, self.notes, esc_cancels=False)
        self.runner.result.connect(self.show_result)
        self.runner.error.connect(lambda error: self.notes.set_notes([error_note(error)]))

    def _build_options(self) -> None:
        """What to trace: the method, what a cell shows, what corrupts the pinned input, the target."""
        self.method = QComboBox()
        for key, title in METHODS.items():
            self.method.addItem(title, key)
        self.method.setToolTip("Exact: one patched run per cell, batched. Attribution: a gradient estimate of "
                               "every cell from two passes, for long inputs; its agreement with exact patching on "
                               "a sample is reported")
        self.shown = QComboBox()
        for key, title in SHOWN.items():
            self.shown.addItem(title, key)
        self.shown.currentIndexChanged.connect(self._redraw)
        # What corrupts the pinned input: the edit, or (no counterfactual at hand) seeded noise on some
        # of its tokens, 3 x the embeddings' standard deviation as in ROME.
        self.corruption = QComboBox()
        self.corruption.addItem("the edit", EDIT)
        self.corruption.addItem("noise on tokens", NOISE)
        self.noise_positions = QLineEdit()
        self.noise_positions.setPlaceholderText("token positions, e.g. 2, 3 (0 = first token)")
        self.noise_positions.setToolTip("Gaussian noise (3 x the embeddings' standard deviation) on these tokens of "
                                        "the pinned input, as shown on the heatmap's axis: the corruption when no "
                                        "edit is at hand")
        self.noise_seed = spin_box(0, MAX_SEED, prefix="seed ")
        self.target = QLineEdit()  # empty: the clean prediction (the tab's answer)
        self.target.setPlaceholderText("target: the clean prediction")
        self.target.setToolTip(TARGET_TIP)
        self.corruption.currentIndexChanged.connect(self._corruption_changed)
        self._corruption_changed()

    def _build_view(self) -> None:
        """Two short rows of options and actions (they fit a 900 px screen), the heatmaps, the words."""
        self.title = QLabel("Clean: the pinned input; corrupted: the edit. Trace to patch.")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.states = PatchHeatmap("restored share or P", ("hidden state (0 = embeddings)", "token (* = edited)"))
        self.heads = PatchHeatmap("restored share or P", ("layer", "head (all = every head)"))
        self.states.hovered = lambda row, column, text: self._hovered("state", row, column, text)
        self.heads.hovered = lambda row, column, text: self._hovered("head", row, column, text)
        self.view = splitter(Qt.Orientation.Vertical, self.states, self.heads)
        self.view.setStretchFactor(0, 3)
        self.view.setStretchFactor(1, 2)
        self.words = QLabel("Hover a cell to read it in words.")
        self.words.setWordWrap(True)
        layout = PageLayout(scroll_body(self))  # smaller than its contents on a small screen: they scroll
        layout.addLayout(row("Method:", self.method, "Show:", self.shown, stretch=None))
        layout.addLayout(row("Corrupt with:", self.corruption, self.noise_positions, self.noise_seed, "Target:",
                             self.target, stretch=None))
        layout.addLayout(row(self.trace_button, self.cancel_button, self.export_button, self.python_button,
                              self.progress, stretch=self.progress))
        for widget in (self.title, self.view, self.words, self.notes):
            layout.addWidget(widget, 1 if widget is self.view else 0)

    def refresh(self) -> None:
        from bertstudio.core.patching.jobs import trace_job

        try:
            request, task, pinned, edit, label = self.source()
            if request is None:
                raise BertStudioError("Load a model first.")
            noise = self.noise() if self.corruption.currentData() == NOISE else None
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        if noise is not None:
            edit, label = pinned, f"noise on tokens {', '.join(map(str, noise.positions))}"
        self.request, self.texts, self.corrupted_by = request, (pinned, edit), label
        self.title.setText(f"Clean: the pinned input; corrupted: {label}. Tracing…")
        self.runner.start(trace_job, request, task, pinned, None if noise else edit, self.method.currentData(),
                          target=self.target.text().strip() or None, noise=noise)

    def noise(self) -> Any:
        """The noise corruption the fields ask for; InputError naming what is wrong."""
        from bertstudio.core.errors import InputError
        from bertstudio.core.patching.setup import Noise

        items = [item for item in self.noise_positions.text().replace(" ", ",").split(",") if item]
        if not items or not all(item.isdigit() for item in items):
            raise InputError("Noise needs the token positions to corrupt, e.g. 2, 3 (0 = the first token).")
        positions = tuple(int(item) for item in items)
        if max(positions) > MAX_POSITION:
            raise InputError(f"A token position is at most {MAX_POSITION}.")
        return Noise(positions, self.noise_seed.value())

    def _corruption_changed(self, *_args: Any) -> None:
        noisy = self.corruption.currentData() == NOISE
        self.noise_positions.setEnabled(noisy)
        self.noise_seed.setEnabled(noisy)

    def cancel(self) -> None:
        self.lifecycle.cancel()

    def show_result(self, result: Any) -> None:
        self.result = result
        self.chosen = None
        self.notes.set_notes(list(result.notes))
        self.export_button.setEnabled(True)
        noisy = self.corruption.currentData() == NOISE  # the script rebuilds an edit, not seeded noise
        self.python_button.setEnabled(not noisy)
        self.python_button.setToolTip(NOISE_SCRIPT if noisy else PYTHON_TIP)
        agreement = ""
        if result.method == "attribution" and result.agreement is not None:
            agreement = (f" · estimate vs exact patching: Spearman {result.agreement:+.2f} on "
                         f"{result.agreement_cells} cells")
        self.title.setText(f"<b>{html.escape(result.target_label)}</b>: clean {result.clean_score:.4f}, corrupted "
                           f"({html.escape(self.corrupted_by)}) {result.corrupted_score:.4f}{agreement}")
        self._redraw()

    def value(self, raw: float | None) -> float:
        """What a cell shows on the 0-1 scale (NaN: no value)."""
        if raw is None:
            return float("nan")
        if self.shown.currentData() == PROBABILITY:
            return raw
        restored = self.result.restored(raw)
        return float("nan") if restored is None else restored

    def _written(self, raw: float | None) -> str:
        shown = self.value(raw)
        if shown != shown:  # NaN
            return ""
        return f"{shown:.2f}" if self.shown.currentData() == PROBABILITY else f"{round(100 * shown)}%"

    def _redraw(self, *_args: Any) -> None:
        result = self.result
        if result is None:
            return
        columns = []
        for position, token in enumerate(result.clean_tokens):
            if position in result.differing:
                other = result.counterpart[position]
                edited = result.corrupted_tokens[other] if other is not None and result.same_length else "—"
                columns.append(f"*{token}→{edited}")
            else:
                columns.append(token)
        if result.states is not None:
            rows = [str(level) for level in range(len(result.states))]
            self.states.show_grid(rows, columns, [[self.value(v) for v in row] for row in result.states],
                                  [[self._written(v) for v in row] for row in result.states], result.state_words)
        else:
            self.states.show_grid([], [], [], [], lambda _r, _c: "")
        self.states.setVisible(result.states is not None)
        heads = len(result.heads[0]) if result.heads else 0
        grid = [(*row, result.layers[layer]) for layer, row in enumerate(result.heads)]
        self.heads.show_grid([str(layer) for layer in range(len(grid))], [*map(str, range(heads)), "all"],
                             [[self.value(v) for v in row] for row in grid],
                             [[self._written(v) for v in row] for row in grid], self._head_words)

    def _head_words(self, layer: int, column: int) -> str:
        result = self.result
        if column < len(result.heads[layer]):
            return str(result.head_words(layer, column))
        return (f"Copying every head of layer {layer} (the whole attention output) from the clean run: "
                f"{result.target_label} = {result.layers[layer]:.4f}")

    def _hovered(self, kind: str, row: int, column: int, text: str) -> None:
        self.chosen = (kind, row, column)
        self.words.setText(text)

    def copy_python(self) -> None:
        from bertstudio.core.patching.snippet import patch_script

        result = self.result
        if result is None or self.request is None:
            return
        kind, row, column = self.chosen or ("head", 0, 0)
        if kind == "head" and column >= len(result.heads[row]):
            kind, column = "head", 0
        try:
            script = patch_script(self.request.source, result, self.texts[0], self.texts[1], kind, row, column)
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        QApplication.clipboard().setText(script)
        self.notes.set_notes([Note("info", f"Copied a script for {kind} cell ({row}, {column}).")])

    def export(self, path: str | None = None) -> None:
        from bertstudio.core.errors import InputError
        from bertstudio.ui.export import FILTER, export_json, export_png, export_svg, target

        if self.result is None:
            return
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export the trace", "trace.png", FILTER)
            if not path:
                return
        chosen = target(path)
        try:
            if chosen.suffix.lower() == ".json":
                export_json(self.result.to_json(), chosen)
            elif chosen.suffix.lower() == ".svg":
                export_svg(self.view, chosen)
            else:
                export_png(self.view, chosen)
        except (InputError, OSError) as error:
            self.notes.set_notes([Note("error", f"Could not export: {error}")])
            return
        self.notes.set_notes([Note("info", f"Exported {chosen.name}.")])
