"""Explain: why the model said that — token attributions, head importance, per-layer predictions.

A task tab's "Explain…" calls `explain(spec_key, request, inputs, result)`: the task and model are
set and the attributions of the result's own answer (`inputs.target_of`) computed at once, on the
result's own inputs (`Handed`): the text box shows them, but they never round-trip through it (a
two-line text classified as one text stays one text), until the person edits the box. The tab
also works on its own: choose a task, load a model, type the input (one part per line). All work runs in
the tab's TaskRunner (progress, Cancel or Esc); the core is `core.explain`, the jobs are
`core.explain.jobs`. A method's settings (IG steps and baseline, LIME / SHAP samples and seed)
show only for it; "All methods" runs each on the same input and shows them side by side with
their rank agreement; Faithfulness adds comprehensiveness and sufficiency to each explanation.
The shown attributions keep what they were computed from (model, task, input, target and the
method settings that change the numbers: `ExplainOrigin`); any change marks them Out of date,
naming it, in the pages' corner, and File → Export result writes that origin, not the boxes now.

Switching the task reloads the bar's model for the new task (its class and head warning are the
new task's, and Explain works without a second Load). Its head warning is on the model's own
line (elided, whole in the tooltip), so nothing below moves when a warning comes or goes and no
empty row waits for one.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QComboBox, QLabel, QPlainTextEdit, QPushButton, QTabWidget, QWidget

from bertstudio.core.errors import BertStudioError, InputError
from bertstudio.core.explain.inputs import explainable
from bertstudio.core.explain.jobs import all_methods_job, explain_job, importance_job, prune_job
from bertstudio.core.explain.methods import label as method_label
from bertstudio.core.jobs import Outcome
from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.core.tasks.spec import ExplainAdapter, adapter_for
from bertstudio.ui.binding import MERGED, watch_inputs
from bertstudio.ui.tabs.frame import ModelTab, error_note
from bertstudio.ui.tabs.run_lifecycle import RunLifecycle
from bertstudio.ui.tabs.tab_state import INVALID, RunState
from bertstudio.ui.widgets.attribution_view import AttributionView
from bertstudio.ui.widgets.elided_label import ElidedLabel
from bertstudio.ui.widgets.explain_faithfulness import FaithfulnessTable
from bertstudio.ui.widgets.explain_methods import MethodsView
from bertstudio.ui.widgets.explain_notices import CornerStaleBanner, warning_beside_summary
from bertstudio.ui.widgets.explain_options import ALL_METHODS, MethodOptions
from bertstudio.ui.widgets.explain_origin import ExplainOrigin, ExplainState, Handed
from bertstudio.ui.widgets.explain_target import TargetPicker
from bertstudio.ui.widgets.head_importance_view import HeadImportanceView
from bertstudio.ui.widgets.layer_predictions import LayerPredictionsView
from bertstudio.ui.widgets.layouts import column, row
from bertstudio.ui.widgets.run_controls import ProgressLine


class ExplainTab(ModelTab):
    TASK = "explain"
    TITLE = "Explain"
    ORDER = 90
    BOUND = {"task": "task_key", "input": "input", MERGED: "options",  # the workspace binds these by name
             "tuned_lens": "layers.lens"}
    MODEL_TASK = explainable()[0].key  # the first task it lists

    def build(self) -> None:
        self._request: LoadRequest | None = None  # the model a task tab handed over (or the bar's)
        self._handed: Handed | None = None  # a task tab's input and answer, until the box is edited
        self._started_for: RunState | None = None  # what the running explanation computes
        self._shown_for: RunState | None = None  # what the shown explanation was computed from
        self.outcome: Outcome[Any] | None = None  # the shown explanation (File → Export result)
        self._build_inputs()
        self.body.addWidget(self._build_pages(), 1)
        self._stale_timer = QTimer(self)
        self._stale_timer.setSingleShot(True)
        self._stale_timer.setInterval(0)  # once per burst of changes (a hand-off sets several fields)
        self._stale_timer.timeout.connect(self._update_stale)
        self.lifecycle = RunLifecycle(self, self.runner, self.run, self.run_button, self.cancel_button,
                                      self.progress_line, self.notes, on_running=self._set_running)
        self.runner.result.connect(self._on_result)
        self.head_warning = warning_beside_summary(self.model_bar)
        self.model_bar.loaded.connect(self._show_head_warning)
        self._task_changed()
        for signal in (self.task_combo.currentIndexChanged, self.input.textChanged, self.target.currentTextChanged,
                       self.method.currentIndexChanged, self.model_bar.loaded, self.model_bar.busy_changed):
            signal.connect(lambda *_args: self._stale_timer.start())
        watch_inputs(self.options, lambda *_args: self._stale_timer.start())

    def _build_inputs(self) -> None:
        """The task and the parts it reads, the input, the target and method with Explain and Cancel,
        and the method's settings on a row of their own."""
        self.task_combo = QComboBox()
        for spec in explainable():  # exactly the specs with an Explain adapter, in their order
            self.task_combo.addItem(spec.title, spec.key)
        self.task_combo.currentIndexChanged.connect(self._task_changed)
        self.input_label = ElidedLabel()  # never widens the window
        self.input = QPlainTextEdit()
        self.input.setMaximumHeight(72)
        self.target = TargetPicker()
        self.options = MethodOptions()  # the method picker and each method's settings (their own row)
        self.method, self.steps, self.converge = self.options.method, self.options.steps, self.options.converge
        self.run_button = QPushButton("Explain")
        self.cancel_button = QPushButton("Cancel")
        self.progress_line = ProgressLine()
        policy = self.progress_line.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # the row keeps its shape between runs
        self.progress_line.setSizePolicy(policy)
        self.body.addLayout(row(QLabel("Task:"), self.task_combo, self.input_label))
        self.body.addWidget(self.input)
        self.body.addLayout(row(QLabel("Target:"), self.target, QLabel("Method:"), self.method, self.run_button,
                                self.cancel_button, self.progress_line))
        self.body.addWidget(self.options)

    def _build_pages(self) -> QTabWidget:
        """Token attributions (with their faithfulness), all methods, head importance, per-layer predictions."""
        self.attributions = AttributionView()
        self.faithfulness = FaithfulnessTable()
        self.faithfulness.setFixedHeight(self.faithfulness.height_for(1))  # one row: the explanation above it
        self.attribution_page = column(self.attributions, self.faithfulness, stretch=0)
        self.methods = MethodsView()
        self.importance = HeadImportanceView()
        self.importance.compute_requested.connect(self._compute_importance)
        self.importance.prune_requested.connect(self._prune)
        self.layers = LayerPredictionsView()
        self.layers.lens_changed.connect(self._lens_changed)
        self.pages = QTabWidget()
        for page, title in ((self.attribution_page, "Token attributions"), (self.methods, "All methods"),
                            (self.importance, "Head importance"), (self.layers, "Per-layer predictions")):
            self.pages.addTab(page, title)
        self.stale_banner = CornerStaleBanner(self.pages)  # Out of date, naming what changed
        return self.pages

    # -- public ------------------------------------------------------------------------------
    def explain(self, spec_key: str, request: LoadRequest, inputs: Any, result: Any) -> None:
        """From a task tab: its task, model, input and result; the attributions of the result's
        answer on that very input start at once."""
        from bertstudio.core.explain.inputs import target_of, texts_of

        try:
            texts = texts_of(spec_key, inputs)
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        self._request = request  # set first: the task switch keeps it (and reloads nothing)
        self.set_task(spec_key)
        shown = "\n".join(texts)
        self.input.setPlainText(shown)
        self._handed = Handed(spec_key, texts, inputs, target_of(spec_key, result), self.input.toPlainText(),
                              request.source)
        self._request = request
        for combo, value in ((self.model_bar.device, request.device), (self.model_bar.dtype, request.dtype)):
            if combo.findText(value) >= 0:
                combo.setCurrentText(value)
        self.model_bar.load(request.source)  # the bar shows the model's facts; the job uses `request`
        self.target.fill((), keep=False)  # the explanation brings the targets a person may choose
        self.run()

    def set_task(self, key: str) -> None:
        index = self.task_combo.findData(key)
        if index < 0:
            raise InputError(f"{key} cannot be explained.")
        self.task_combo.setCurrentIndex(index)

    @property
    def task_key(self) -> str:
        return str(self.task_combo.currentData())

    @task_key.setter
    def task_key(self, key: str) -> None:
        """A task it can explain (a workspace's); another leaves the choice as it is."""
        if key in {spec.key for spec in explainable()}:
            self.set_task(key)

    # -- inputs --------------------------------------------------------------------------------
    def _method(self) -> str:
        return str(self.method.currentData())

    def _task_changed(self, *_args: Any) -> None:
        adapter = adapter_for(self.task_key, ExplainAdapter)
        self.model_bar.task = self.task_key
        self.input_label.setText(f"Input, one part per line: {adapter.parts}")
        self._request = None if self._request is None or self._request.task != self.task_key else self._request
        self.target.fill((), keep=False)
        self.pages.setTabEnabled(self.pages.indexOf(self.layers), adapter.per_layer is not None)
        self._reload_for_task()

    def _reload_for_task(self) -> None:
        """The bar's model was loaded for another task: its class and head warning were that
        task's. Load the same model for this one (the shared cache makes it quick)."""
        info = self.model_bar.info
        if info is None or info.request.task == self.task_key or self._request is not None:
            return
        self.head_warning.setText("")  # the old task's warning is no longer true
        self.model_bar.load(info.request.source)

    def _show_head_warning(self, info: ModelInfo) -> None:
        self.model_bar.warning_label.setVisible(False)  # said on the summary's line instead
        self.head_warning.setText(f"⚠ {info.head_warning}" if info.head_warning else "")

    def chosen_target(self) -> str | None:
        """The target picked or typed; by default the handed-over result's answer, else the model's."""
        handed, request = self.handed(), self.request()
        same_model = handed is not None and request is not None and request.source == handed.source
        return self.target.chosen(handed.target if handed is not None and same_model else None)

    def handed(self) -> Handed | None:
        """The task tab's hand-off while it still holds: same task, the box as it was given."""
        handed = self._handed
        if handed is None or handed.task != self.task_key or handed.shown != self.input.toPlainText():
            return None
        return handed

    def texts(self) -> tuple[str, ...]:
        """The handed-over input's own texts, or the typed input read one part per line."""
        from bertstudio.core.explain.inputs import split_lines

        handed = self.handed()
        if handed is not None:
            return handed.texts
        texts = split_lines(self.task_key, self.input.toPlainText())
        if not texts:
            raise InputError("Type the input to explain.", hint=self.input_label.text())
        return texts

    def task_inputs(self) -> Any:
        """The task's own input: the one handed over if unchanged, else built from the typed text."""
        from bertstudio.core.explain.inputs import task_inputs

        handed = self.handed()
        return handed.inputs if handed is not None else task_inputs(self.task_key, self.texts())

    def request(self) -> LoadRequest | None:
        if self._request is not None and self._request.task == self.task_key:
            return self._request
        info = self.model_info
        return info.request if info is not None and info.request.task == self.task_key else None

    def model_loaded(self, info: ModelInfo) -> None:
        """The bar's model is used unless a task tab handed over this very model (its device kept)."""
        handed = self._request
        if info.request.task == self.task_key and (handed is None or handed.source != info.request.source):
            self._request = info.request
        elif info.request.task != self.task_key:  # a load that began before the task was switched
            self._reload_for_task()

    # -- what the shown explanation belongs to -------------------------------------------------
    def origin_now(self) -> RunState:
        """What Explain would compute now: the model, and the task, input, target and method settings."""
        handed = self.handed()
        try:
            texts: Any = self.texts()
            if handed is None:
                adapter_for(self.task_key, ExplainAdapter).inputs_of(texts)  # the parts the task takes, or InputError
        except BertStudioError:
            texts = INVALID  # cannot run: never equal to what a result was computed from
        origin = ExplainOrigin(self.task_key, texts, handed.inputs if handed is not None else None,
                               self.chosen_target(), self.options.settings())
        return RunState(self.request(), origin, (), None)  # no heads off, no second model here

    def result_origin(self) -> RunState | None:
        return self._shown_for

    def read_state(self) -> ExplainState:
        """The state object that names a changed task, target or method setting apart from the input."""
        return ExplainState.of(super().read_state())

    def stale_reason(self) -> str:
        """What changed since the shown explanation was computed ("" if current or none shown)."""
        shown = self._shown_for
        if shown is None:
            return ""
        if self.model_bar.busy and shown.model is not None and self.model_bar.source_text() != shown.model.source:
            return "model"  # another model is coming
        return self.read_state().stale_reason()

    def result_view(self) -> QWidget:
        """What File → Export result draws: the pages of results."""
        return self.pages

    def clear_result(self) -> None:
        """No explanation shown (a failed Explain): nothing to export, no Out-of-date mark."""
        self.attributions.clear()
        self.faithfulness.clear()
        self.methods.clear()
        self.layers.clear()
        self.outcome = self._shown_for = None
        self._update_stale()

    # -- running -------------------------------------------------------------------------------
    def _start(self, func: Any, *args: Any, **kwargs: Any) -> None:
        request = self.request()
        try:
            if request is None and self.model_bar.busy:
                raise InputError(f"The model for {self.task_combo.currentText()} is still loading.",
                                 hint="Explain again when it is loaded.")
            if request is None:
                raise InputError(f"Load a model for {self.task_combo.currentText()} first.")
            self.runner.start(func, request, self.task_key, *args, **kwargs)
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])

    def run(self) -> None:
        try:
            texts = self.texts()
        except BertStudioError as error:
            self.clear_result()  # the result is not what this input would give
            self.notes.set_notes([error_note(error)])
            return
        self._started_for = self.origin_now()  # read from the very widgets the job's arguments are
        options = self.options
        if self._method() == ALL_METHODS:
            self._start(all_methods_job, texts, self.chosen_target(), options.steps.value(), options.samples.value(),
                        options.seed.value(), options.faithfulness.isChecked())
            return
        self._start(explain_job, texts, self._method(), self.chosen_target(), options.steps.value(),
                    options.converge.isChecked(), samples=options.samples.value(), seed=options.seed.value(),
                    baseline=str(options.baseline.currentData()), faithfulness=options.faithfulness.isChecked(),
                    lens=(self.layers.lens_path()
                          if adapter_for(self.task_key, ExplainAdapter).per_layer is not None else ""))

    def _lens_changed(self, _path: str) -> None:
        """A tuned lens chosen or cleared: the shown explanation's per-layer page is read again with it."""
        reads_layers = adapter_for(self.task_key, ExplainAdapter).per_layer is not None
        if self._shown_for is not None and reads_layers and not self.runner.busy:
            self.run()

    def _compute_importance(self, data: str, normalise: bool) -> None:
        try:
            texts = () if data else self.texts()
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        self._started_for = None  # not an explanation: the shown one keeps its origin
        self._start(importance_job, texts, data, normalise)

    def _prune(self, heads: tuple[tuple[int, int], ...]) -> None:
        try:
            inputs = self.task_inputs()
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        self._started_for = None
        self._start(prune_job, inputs, heads)

    def cancel(self) -> None:
        self.lifecycle.cancel()

    def _set_running(self, running: bool) -> None:
        """Head importance and pruning start on the same runner: off while it works."""
        self.importance.compute_button.setEnabled(not running)
        self.importance.prune_button.setEnabled(not running and self.importance.importance is not None)

    def _on_error(self, error: BaseException) -> None:
        if self._started_for is not None:  # an Explain failed: the old explanation is not its answer
            self._started_for = None
            self.clear_result()
        super()._on_error(error)

    def _on_result(self, tagged: tuple[str, Any]) -> None:
        kind, value = tagged
        if kind == "explain":
            explanation, layers = value
            self.attributions.show_explanation(explanation)
            self.faithfulness.show_rows([(method_label(explanation.method, explanation.baseline or "pad"),
                                          explanation.faithfulness)])
            self.target.fill(tuple(explanation.targets))
            self.notes.set_notes(explanation.notes)
            if layers is not None:
                self.layers.show_predictions(layers)
            self.pages.setCurrentWidget(self.attribution_page)
        elif kind == "all":
            self.methods.show_methods(value)
            self.target.fill(tuple(value.explanations[0].targets))
            self.notes.set_notes(value.notes)
            self.pages.setCurrentWidget(self.methods)
        elif kind == "importance":
            self.importance.show_importance(value)
            self.notes.set_notes(value.notes)
        elif kind == "prune":
            self.importance.show_preview(adapter_for(self.task_key, ExplainAdapter).summary, value)
            self.notes.set_notes(value.notes)
        if kind in ("explain", "all"):  # the attributions shown now, and what they were computed from
            self.outcome = Outcome(value[0] if kind == "explain" else value)
            self._shown_for, self._started_for = self._started_for, None
            self._update_stale()

    # -- workspace -----------------------------------------------------------------------------
    def restore(self, state: dict[str, Any]) -> None:
        self._handed = None  # a restored workspace holds text, not a task tab's input
        super().restore(state)
