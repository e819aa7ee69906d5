"""The template every task tab is built on: model bar, run/cancel, compare, heads off, examples,
one notes area, progress, and a splitter that gives the results the room.

A view declares `SPEC_KEY` (title, order, attention implementation come from the task spec) and
writes only its own part: `build_inputs`/`build_results` (its widgets), `inputs()` (the spec's
input dataclass; InputError for bad input), `show_outcome(outcome)`, `clear_result()`,
`state()`/`restore()` (workspace files) and `set_inputs()` (open a dataset row). Running,
cancelling, comparing, ablating, notes and progress happen here, the same for every task;
so do edit and pin and "What would flip this?" (ui/tabs/pinning.py; the jobs are in workers/jobs.py).
So does keeping a result honest: once the input, the model, the heads off or the compared model
differ from what the shown result was computed from, it is marked out of date (banner, faded).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.errors import BertStudioError, InputError, MissingHeadError
from bertstudio.core.heads import HeadSet, format_heads, parse_heads
from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.core.tasks.spec import spec_for
from bertstudio.ui.binding import watch_inputs
from bertstudio.ui.tabs.frame import error_note
from bertstudio.ui.tabs.pinning import PinnedInputs
from bertstudio.ui.tabs.run_lifecycle import RunLifecycle
from bertstudio.ui.tabs.tab_state import INVALID, RunState, TabState
from bertstudio.ui.widgets.notes_area import status_cell
from bertstudio.ui.widgets.run_controls import ProgressLine, RunControls, StaleBanner
from bertstudio.workers.jobs import task_job


class ExplainRequest(NamedTuple):
    """What "Explain…" hands the main window: the task, the model, the input and its result."""

    spec_key: str
    request: LoadRequest
    inputs: Any
    result: Any


class TaskTab(PinnedInputs):
    """The template for one task spec (see the module docstring)."""

    SPEC_KEY: ClassVar[str] = ""  # the task spec this tab shows
    RUN_LABEL: ClassVar[str] = "Run"
    INPUT_SHARE: ClassVar[float] = 0.0  # the inputs' share of the splitter at first; 0: just what they need
    NOTES_ONE_LINE = True

    explain_requested = Signal(object)  # ExplainRequest

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.SPEC_KEY:
            spec = spec_for(cls.SPEC_KEY)
            cls.TASK, cls.TITLE, cls.ORDER = spec.key, spec.title, spec.order
            cls.ATTN_IMPLEMENTATION = spec.attn_implementation

    def _setup(self) -> None:
        super()._setup()
        self.spec = spec_for(self.SPEC_KEY)
        self.outcome: Any = None
        self.result: Any = None
        self._ran: tuple[LoadRequest, Any] | None = None
        self._started_for: RunState | None = None  # what the running job computes
        self._shown_for: RunState | None = None  # what the shown result was computed from
        self._run_on_load = False  # an opened dataset row: run it once its model has loaded
        self.heads_origin = ""  # where the heads-off text came from ("from Attention, 2 heads"); "" typed

    # -- layout ----------------------------------------------------------------------------
    def _build_layout(self) -> None:
        self._build_template()

    def _build_template(self) -> None:
        self._build_controls()
        self._build_results_area()
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addLayout(self.inputs_box, 1)
        top_layout.addWidget(self.controls)
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        self.build_pins(bottom_layout)  # Pin, the kept edits, What would flip this? (ui/tabs/pinning.py)
        bottom_layout.addWidget(self.stale_banner)
        bottom_layout.addWidget(self.results_widget, 1)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(top)
        self.splitter.addWidget(bottom)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        layout = self._scrolling_page()
        layout.addWidget(self.model_bar)
        layout.addWidget(self.splitter, 1)

        self.build_inputs(self.inputs_box)
        self.build_results(self.results_box)
        for label, data in self.examples():
            self.examples_combo.addItem(label, data)
        self.examples_combo.setVisible(self.examples_combo.count() > 1)
        self._size_splitter(top)
        # any change of an input widget (compare and heads off included) may make the result stale
        watch_inputs(top, lambda *_args: self._stale_timer.start(0), skip=(self.examples_combo,))
        self.lifecycle = RunLifecycle(self, self.runner, self.run, self.run_button, self.cancel_button, self.progress,
                                      self.notes, on_running=self._running_changed)
        self.model_bar.busy_changed.connect(self._on_model_busy)
        self.runner.result.connect(self._on_result)

    def _build_controls(self) -> None:
        """The inputs' box and the run controls under it (Run, Cancel, examples, compare, heads off)."""
        self.inputs_box = QVBoxLayout()
        self.controls = RunControls(self.RUN_LABEL, self.model_bar.source)
        self.options = self.controls.options  # a view's small options (top-k, aggregation...) go here
        self.examples_combo = self.controls.examples_combo
        self.compare_source = self.controls.compare_source
        self.heads_off = self.controls.heads_off
        self.run_button = self.controls.run_button
        self.cancel_button = self.controls.cancel_button
        self.explain_button = self.controls.explain_button
        self.explain_button.setVisible(self.spec.explain is not None)  # only what Explain can read
        self.examples_combo.activated.connect(self._example_chosen)
        self.explain_button.clicked.connect(self._explain)
        self.progress = ProgressLine()
        self.controls.add_progress(status_cell(self.progress, self.notes))
        self.heads_off.textEdited.connect(self._heads_typed)
        self.heads_off.textChanged.connect(self._check_heads)
        self.controls.heads_clear.clicked.connect(lambda: self.set_ablated_heads((), ""))

    def _build_results_area(self) -> None:
        """The results' box, dimmed under an Out-of-date banner while the result is out of date."""
        self.results_box = QVBoxLayout()
        self.results_box.setContentsMargins(0, 0, 0, 0)
        self.results_widget = QWidget()
        self.results_widget.setLayout(self.results_box)
        self.stale_banner = StaleBanner(self.results_widget,
                                        action=f"Press {self.RUN_LABEL} (Ctrl+Enter) to update it.")
        self._stale_timer = QTimer(self)
        self._stale_timer.setSingleShot(True)
        self._stale_timer.setInterval(0)
        self._stale_timer.timeout.connect(self._update_stale)

    def _size_splitter(self, top: QWidget) -> None:
        """The sizes saved for this tab, else the view's INPUT_SHARE, else just what the inputs need."""
        saved = self.settings.splitter_sizes(self.TASK)
        if len(saved) == 2 and all(size > 0 for size in saved):
            self.splitter.setSizes(saved)
        elif self.INPUT_SHARE:
            self.splitter.setSizes([int(1000 * self.INPUT_SHARE), 1000 - int(1000 * self.INPUT_SHARE)])
        else:
            self.splitter.setSizes([top.sizeHint().height(), 10_000])
        self.splitter.splitterMoved.connect(self._save_splitter)

    def _save_splitter(self, *_args: Any) -> None:
        self.settings.set_splitter_sizes(self.TASK, self.splitter.sizes())

    # -- for views -------------------------------------------------------------------------
    def build_inputs(self, box: QVBoxLayout) -> None:
        """Add the input widgets (options may go into `self.options`)."""
        raise NotImplementedError

    def build_results(self, box: QVBoxLayout) -> None:
        """Add the result widgets (they get the splitter's stretch)."""
        raise NotImplementedError

    # inputs(), show_outcome(outcome) and set_inputs(inputs): declared where pins first use them (pinning.py)
    def clear_result(self) -> None:
        """Remove the shown result (an input error or another model makes it stale)."""

    def examples(self) -> list[tuple[str, Any]]:
        """(label, data) for the examples combo; `use_example(data)` fills the inputs."""
        return []

    def use_example(self, data: Any) -> None:
        self.set_inputs(data)

    def _on_model_busy(self, busy: bool) -> None:
        """Another model is coming: a running job belongs to the old one, so it stops, and
        whatever it would still return is dropped (never shown under the new model's bar)."""
        if busy and self.runner.busy:
            self.runner.cancel()
        if not busy:
            self._run_on_load = False  # loaded (it ran already), failed or cancelled: nothing to run
        self._stale_timer.start(0)

    def _on_model_loaded(self, info: ModelInfo) -> None:
        self.runner.cancel()
        self.clear_shown()
        self.notes.clear()
        self.pins.forget_results()  # they belong to the model before
        self.pin_bar.flip_button.setEnabled(True)
        super()._on_model_loaded(info)
        self._check_heads()
        if self._run_on_load:
            self._run_on_load = False
            self.run()

    def run_when_ready(self) -> None:
        """Run now if the model is loaded and no other is coming, else once it has loaded
        (a row opened from Evaluate never shows the previous text's result)."""
        if self.model_info is not None and not self.model_bar.busy:
            self.run()
        else:
            self._run_on_load = True

    # -- what a result belongs to ----------------------------------------------------------
    def stale_reason(self) -> str:
        """What changed since the shown result was computed ("input", "model", "heads off"...); "" if current."""
        if self._shown_for is None:
            return ""
        if self.model_bar.busy:
            return "model"
        return self.read_state().stale_reason()

    def redrawn_for(self, change: Callable[[Any], Any]) -> None:
        """A view re-drew its result for changed inputs without a run (NER: another strategy, all
        computed by one run); `change(inputs)` gives the inputs the shown result now belongs to."""
        if self._shown_for is not None and self._ran is not None:
            inputs = change(self._shown_for.inputs)
            self._shown_for = self._shown_for._replace(inputs=inputs)
            self._ran = (self._ran[0], inputs)
        self._update_stale()

    # -- heads off ---------------------------------------------------------------------------
    def _heads_typed(self, _text: str) -> None:
        self.heads_origin = ""  # typed by hand: the field no longer holds what another tab sent
        self._check_heads()

    def _check_heads(self) -> None:
        """Heads that the loaded model does not have are named at once, not only when Run fails."""
        problem = ""
        try:
            self.ablated_heads()
        except BertStudioError as error:
            problem = getattr(error, "message", "") or str(error)
        self.controls.show_heads(self.heads_origin, problem)

    # -- running ---------------------------------------------------------------------------
    def ablated_heads(self) -> HeadSet:
        info = self.model_info
        return parse_heads(self.heads_off.text(), info.layers if info else None, info.heads if info else None)

    def set_ablated_heads(self, heads: HeadSet, origin: str = "") -> None:
        """Heads off set from elsewhere; `origin` says where ("from Attention, 2 heads"), shown beside them."""
        self.heads_origin = origin if heads else ""
        self.heads_off.setText(format_heads(heads))
        self._check_heads()

    def run(self) -> None:
        request = self.model_request()
        if request is None:
            self.show_message("Load a model first.", error=True)
            return
        try:
            inputs = self.inputs()
            heads = self.ablated_heads()
            compare_source = self.compare_source.source()
            if self.compare_source.enabled.isChecked() and not compare_source:
                raise InputError("Choose the second model to compare with, or untick “Compare with…”.")
            if heads and compare_source:
                raise InputError("Compare with a second model or switch heads off, not both at once.")
        except BertStudioError as error:
            self.clear_shown()
            self.notes.set_notes([error_note(error)])
            return
        self._ran = (request, inputs)
        self._started_for = RunState(request, inputs, heads, compare_source)
        if not self.start_pinned(request, inputs, compare_source, heads):
            self.runner.start(self.job(), self.spec, request, inputs, compare_source, heads)

    def job(self) -> Callable[..., Any]:
        """The worker function Run starts: `task_job`'s signature; a view may return its own
        (attention sends its grid as a progress payload before model B is loaded)."""
        return task_job

    def cancel(self) -> None:
        self.lifecycle.cancel()

    def _running_changed(self, running: bool) -> None:
        if running:  # the result it would explain is about to be replaced
            self.explain_button.setEnabled(False)

    def _on_result(self, outcome: Any) -> None:
        outcome, self.result = self.pinned_outcome(outcome)  # beside the pinned input's result, when one is
        self.outcome = outcome
        self.render_shown(outcome)
        self._shown_for = self._started_for
        self._update_stale()
        shown_by_bar = self.model_info.head_warning if self.model_info else ""
        self.notes.set_notes(n for n in outcome.notes if n.text != shown_by_bar)
        self.explain_button.setEnabled(True)
        self.pin_bar.pin_button.setEnabled(True)

    def _on_error(self, error: BaseException) -> None:
        self.clear_shown()
        if isinstance(error, MissingHeadError):  # the bar's "meaningless" warning has the same cause
            self.model_bar.warning_label.setVisible(False)
        super()._on_error(error)

    def clear_shown(self) -> None:
        self.outcome = self.result = None
        self._shown_for = None
        self.explain_button.setEnabled(False)
        self.pin_bar.pin_button.setEnabled(False)
        self.clear_result()
        self._update_stale()

    def last_run(self) -> tuple[str, Any]:
        """(model source, inputs) of the last Run; before any, the chosen model and the current inputs
        (InputError when they cannot run). What Copy as Python reproduces."""
        if self._ran is not None:
            return self._ran[0].source, self._ran[1]
        info = self.model_info
        return (info.request.source if info is not None else self.model_bar.source_text()), self.inputs()

    def _explain(self) -> None:
        """Explain gets the shown result with the model and inputs it was computed from (its state
        object's `result`), never the boxes as they are now."""
        shown = self.read_state().result
        if shown is not None and shown.model is not None and self.result is not None and self.spec.explain is not None:
            self.explain_requested.emit(ExplainRequest(self.SPEC_KEY, shown.model, shown.inputs, self.result))

    def _example_chosen(self, index: int) -> None:
        data = self.examples_combo.itemData(index)
        if data is not None:
            self.use_example(data)
        self.examples_combo.setCurrentIndex(0)

    # -- for pins (ui/tabs/pinning.py) -------------------------------------------------------
    def last_ran(self) -> Any:
        return self._ran[1] if self._ran is not None else None

    def shown_now(self, inputs: Any) -> None:
        """A kept result is shown again: it belongs to `inputs` on the model loaded now."""
        request = self.model_request()
        if request is not None:
            self._ran = (request, inputs)
        self._shown_for = self.origin_now()
        self._update_stale()
        self.explain_button.setEnabled(self.result is not None)

    # -- the tab's state object (ui/tabs/tab_state.py) ------------------------------------------
    def read_state(self) -> TabState:
        """Model, inputs, compare, heads off, pins, and the shown result's origin beside what would
        run now: what the workspace saves, the Out-of-date mark compares and Export writes."""
        state = super().read_state()
        state.compare, state.heads_off = self.compare_source.source() or "", self.heads_off.text()
        state.splitter, state.pins = self.splitter.sizes(), self.pins_state()
        state.has_compare = state.has_run_options = True
        return state

    def result_origin(self) -> RunState | None:
        return self._shown_for

    def origin_now(self) -> RunState:
        try:
            inputs = self.inputs()
        except BertStudioError:
            inputs = INVALID
        try:
            heads: Any = parse_heads(self.heads_off.text())
        except BertStudioError:
            heads = self.heads_off.text()
        return RunState(self.model_request(), inputs, heads, self.compare_source.source())

    def apply_state(self, state: TabState) -> None:
        self.compare_source.set_source(state.compare or None)
        self.heads_origin = "from the saved workspace" if state.heads_off.strip() else ""
        self.heads_off.setText(state.heads_off)
        self._check_heads()
        if len(state.splitter) == 2:
            self.splitter.setSizes(state.splitter)
        super().apply_state(state)  # the view's inputs, then the model field
        self.restore_pins(state.pins)
