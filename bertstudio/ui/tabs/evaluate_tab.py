"""Evaluate: a model (and optionally a second one) on a whole labelled file, in a worker.

The model bar loads for the chosen task; Run reads the file and scores every row through the
core (`core.evaluate`, its jobs in `core/evaluate/jobs.py`), progress and Cancel on the tab's
runner. Results are rendered by the pages in `widgets/eval_results.py`, the curves and threshold
tuner in `widgets/eval_curves.py`, the Rows page and its tools (explain the selected rows, nearest
rows) in `widgets/eval_rows.py`; double-clicking a row emits `open_row(spec key, model
source, the task's input)` for the window to open it in the task's own tab. The file's columns
are chosen in `widgets/eval_columns.py`.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFileDialog, QFormLayout, QLabel, QLineEdit, QPushButton, QSpinBox, QTabWidget

from bertstudio.core import notes
from bertstudio.core.errors import BertStudioError, InputError
from bertstudio.core.evaluate.adapters import checkpoint_task, evaluable, evaluated_as, load_task
from bertstudio.core.evaluate.jobs import evaluation_job, projection_job
from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.core.tasks.spec import EvaluateAdapter, adapter_for
from bertstudio.ui.tabs.frame import ComparingTab, error_note
from bertstudio.ui.tabs.run_lifecycle import RunLifecycle
from bertstudio.ui.tabs.tab_state import RunState
from bertstudio.ui.widgets.cka_heatmap import CompressionPage
from bertstudio.ui.widgets.compare_panel import CompareSource
from bertstudio.ui.widgets.erase_page import ErasePage
from bertstudio.ui.widgets.eval_columns import ColumnsRow
from bertstudio.ui.widgets.eval_curves import CurvesPage
from bertstudio.ui.widgets.eval_results import ComparePage, ConfusionPage, MetricsPage, ProjectorPage
from bertstudio.ui.widgets.eval_rows import RowsPage
from bertstudio.ui.widgets.layouts import row
from bertstudio.ui.widgets.run_controls import ProgressLine, StaleBanner
from bertstudio.workers.runner import TaskRunner


class EvaluateTab(ComparingTab):
    TASK = "evaluate"
    ONNX_RUNTIME = True  # evaluate's predictors are whole forwards through the engine
    TITLE = "Evaluate"
    ORDER = 95
    BOUND = {"task": "task_combo", "data": "data_file", "limit": "limit", "seed": "seed",  # bound by name
             "erase.layer": "erase_page.layer", "erase.concept": "erase_page.concept",
             "erase.positions": "erase_page.positions"}

    MODEL_TASK = next(iter(evaluable()))  # the model bar loads for the picker's task, the first at start

    open_row = Signal(str, str, object)  # spec key, model source, the task's input dataclass

    def build(self) -> None:
        self.evaluation: Any = None  # the last Evaluation (model A)
        self.comparison: Any = None
        self._request: LoadRequest | None = None
        self._run_on_load = ""  # a model handed over (Train's Evaluate…): run once the bar has loaded it
        # What the shown result was computed from, and what the running evaluation computes: the
        # model (source and task), the file (inputs) and the compared model; no heads off here.
        self._shown: RunState | None = None
        self._started: RunState | None = None
        self._build_inputs()
        self._build_pages()
        self._connect_tools()
        self._task_changed()

    def _build_inputs(self) -> None:
        """Task, file, rows and seed; the Columns row; the compared model, Evaluate and Cancel."""
        self.task_combo = QComboBox()
        for key, spec in evaluable().items():
            assert spec.evaluate is not None
            self.task_combo.addItem(spec.evaluate.picker, key)
        self.task_combo.currentIndexChanged.connect(self._task_changed)
        self.data_file = QLineEdit()
        self.data_file.setPlaceholderText("a labelled file: CSV/TSV/JSONL, CoNLL, SQuAD JSON or text")
        self.data_file.editingFinished.connect(self._refresh_columns)
        self.data_file.textChanged.connect(self._update_stale)
        browse = QPushButton("Open…")
        browse.clicked.connect(self._browse)
        self.limit = QSpinBox()
        self.limit.setRange(0, 10_000_000)
        self.limit.setSpecialValueText("all rows")
        self.limit.setToolTip("Only the first N rows (0: all)")
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setToolTip("Masked LM: which tokens are masked (the same seed masks the same tokens)")
        self.columns_row = ColumnsRow()
        self.columns_form = QFormLayout()
        self.columns_form.addRow("Columns:", self.columns_row)
        self.compare_source = CompareSource(self.model_bar.source)
        self.compare_source.enabled.toggled.connect(self._update_stale)
        self.compare_source.combo.editTextChanged.connect(self._update_stale)
        self.model_bar.source.editTextChanged.connect(self._follow_source)
        self.model_bar.dtype.currentIndexChanged.connect(self._update_stale)  # int8: another model
        self.run_button = QPushButton("Evaluate")
        self.cancel_button = QPushButton("Cancel")
        self.progress_line = ProgressLine()
        self.body.addLayout(row(QLabel("Task:"), self.task_combo, QLabel("Data:"), self.data_file, browse,
                                QLabel("Rows:"), self.limit, QLabel("Seed:"), self.seed, stretch=3))
        self.body.addLayout(self.columns_form)
        self.body.addLayout(row(self.compare_source, self.run_button, self.cancel_button, stretch=0))
        self.body.addWidget(self.progress_line)

    def _build_pages(self) -> None:
        from bertstudio.core.evaluate.projector import methods

        self.metrics_page = MetricsPage()
        self.confusion_page = ConfusionPage()
        self.curves_page = CurvesPage()
        self.errors_page = RowsPage()
        self.compare_page = ComparePage()
        self.compression_page = CompressionPage()  # what compression costs: CKA, salience, size, speed
        self.projector_page = ProjectorPage(methods())
        self.erase_page = ErasePage()  # a concept erased from a layer (LEACE): what a probe and the task lose
        self.pages = QTabWidget()
        for page, title in ((self.metrics_page, "Metrics"), (self.confusion_page, "Confusion"),
                            (self.curves_page, "Curves"), (self.errors_page, "Rows"), (self.compare_page, "Compare"),
                            (self.compression_page, "Compression"), (self.projector_page, "Projector"),
                            (self.erase_page, "Erase")):
            self.pages.addTab(page, title)
        # Says so when the shown result belongs to another model, task, file or compared model than
        # the ones set now (a new model kept the old metrics with no mark: issue 29 #3).
        self.stale_banner = StaleBanner(self.pages, action="Press Evaluate (Ctrl+Enter) to update it.")
        self.body.addWidget(self.stale_banner)
        self.body.addWidget(self.pages, 1)
        for page in (self.confusion_page, self.errors_page, self.compare_page, self.projector_page):
            page.opened.connect(self._open_row)

    def _connect_tools(self) -> None:
        """The runners of the pages' own tools (projector, compression, erase); Esc stops them too."""
        self.runner.result.connect(self._on_result)
        self.projector_page.compute_requested.connect(self.project)
        self.projector_runner = TaskRunner(self)
        self.projector_runner.result.connect(self.projector_page.show_projection)
        self.projector_runner.result.connect(self.errors_page.offer_vectors)
        self.projector_runner.finished.connect(lambda: self.projector_page.compute.setEnabled(True))  # Esc too
        self.projector_runner.error.connect(self._on_projection_error)
        self.projector_runner.progress.connect(lambda e: self.projector_page.status.setText(e.message))
        self.compression_runner = TaskRunner(self)
        self.compression_runner.result.connect(self.compression_page.show_report)
        self.compression_runner.error.connect(lambda e: self.compression_page.show_error(
            getattr(e, "message", None) or str(e)))
        self.compression_runner.cancelled.connect(lambda: self.compression_page.show_error("Cancelled."))
        self.compression_runner.progress.connect(lambda e: self.compression_page.status.setText(e.message))
        self.compression_page.compute_requested.connect(self.measure_compression)
        self.erase_runner = TaskRunner(self)
        self.erase_runner.result.connect(self._erased)
        self.erase_runner.error.connect(self._on_error)
        self.erase_runner.progress.connect(lambda e: self.erase_page.status.setText(e.message))
        self.erase_runner.finished.connect(lambda: self.erase_page.erase_button.setEnabled(True))
        self.erase_page.erase_requested.connect(self.erase)
        rows = self.errors_page  # Esc also stops the tools working on the rows (explain, nearest, projector)
        self.lifecycle = RunLifecycle(self, self.runner, self.run, self.run_button, self.cancel_button,
                                      self.progress_line, self.notes,
                                      also_cancels=(rows.explain_runner, rows.neighbours_runner, self.projector_runner,
                                                    self.compression_runner, self.erase_runner))

    # -- inputs ----------------------------------------------------------------------------
    @property
    def task_key(self) -> str:
        return str(self.task_combo.currentData())

    def _task_changed(self, *_args: Any) -> None:
        self.model_bar.task = self.task_key
        self._refresh_columns()
        self._update_stale()

    def _run_state(self, request: LoadRequest | None = None, data: str | None = None) -> RunState:
        """What a Run evaluates: the model request (source, task, device, dtype), the file, the compared model."""
        source = self.model_bar.source_text()
        if request is None and source:
            request = self.model_bar.request(source)
        return RunState(request, self.data_file.text().strip() if data is None else data, (),
                        self.compare_source.source())

    def _follow_source(self, source: str) -> None:
        """A checkpoint folder typed, chosen or handed over for a task whose head it lacks: the task it
        was trained for is chosen from its config before the load, so the model loads once, with its head."""
        source = source.strip()
        self._choose_trained(load_task(source, self.task_key) if source else None, source)
        self._update_stale()

    def _choose_trained(self, task: str | None, checkpoint: str) -> bool:
        """Choose `task`, the one `checkpoint` was trained for, if Evaluate scores it and it is not chosen."""
        index = self.task_combo.findData(task) if task and task != self.task_key else -1
        if index >= 0:
            self.task_combo.setCurrentIndex(index)
            self.notes.set_notes([notes.info(f"Task set to {self.task_combo.currentText()}: the checkpoint was "
                                             f"trained for it ({checkpoint}).")])
        return index >= 0

    def _refresh_columns(self) -> None:
        from bertstudio.core.datafiles import first_line_header

        adapter = adapter_for(self.task_key, EvaluateAdapter)
        header = first_line_header(self.data_file.text().strip())  # 64 KiB at most: fine on the GUI thread
        self.columns_row.show_columns(header, adapter.columns, adapter.choice_columns)

    def _browse(self) -> None:
        filters = adapter_for(self.task_key, EvaluateAdapter).file_filter
        path, _ = QFileDialog.getOpenFileName(self, "Open a labelled file", "", f"{filters};;All files (*)")
        if path:
            self.data_file.setText(path)
            self._refresh_columns()

    def evaluation_request(self) -> Any:
        from bertstudio.core.evaluate.evaluation import EvalRequest
        from bertstudio.core.evaluate.predict import EvalOptions

        path = self.data_file.text().strip()
        if not path:
            raise InputError("Choose a labelled file to evaluate on.")
        return EvalRequest(path, self.columns_row.columns(), self.limit.value() or None,
                           EvalOptions(seed=self.seed.value()))

    # -- running ---------------------------------------------------------------------------
    def run(self) -> None:
        try:
            source = self.model_bar.source_text()
            if not source:
                raise InputError("Choose the model to evaluate.")
            request = self.model_bar.request(source)
            evaluation = self.evaluation_request()
            compare_source = self.compare_source.source()
            if self.compare_source.enabled.isChecked() and not compare_source:
                raise InputError("Choose the second model to compare with, or untick “Compare with…”.")
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        self._request = request
        self._started = self._run_state(request, evaluation.data)
        self.runner.start(evaluation_job, request, evaluation, compare_source)

    def cancel(self) -> None:
        """Esc / Cancel: the evaluation, and any tool working on its rows (explain, nearest, projector)."""
        self.lifecycle.cancel()

    def open_evaluation(self, model_source: str, data_file: str, task_key: str) -> None:
        """Evaluate `model_source` on `data_file` at once (the Train tab's "Evaluate…"); a model trained
        for a task Evaluate does not score is scored as the task its training opens it in."""
        # the checkpoint's own head decides the task before the load: one load, with its head (issue 29)
        index = self.task_combo.findData(load_task(model_source, evaluated_as(task_key)))
        if index >= 0:
            self.task_combo.setCurrentIndex(index)
        self.data_file.setText(str(data_file))
        self._refresh_columns()
        # Through the model bar: the bar shows the model that is scored (a workspace's pending model
        # was loaded and shown while the handed-over one was scored: issue 29 #1); Run when it is ready.
        self._run_on_load = model_source
        self.model_bar.load(model_source)

    def project(self, layer: int, pooling: str, method: str) -> None:
        if self.evaluation is None or self._request is None:
            return
        self.projector_page.compute.setEnabled(False)
        self.projector_runner.start(projection_job, self._request, self.evaluation.dataset, layer, pooling, method)

    def measure_compression(self) -> None:
        """The Compression page's Measure: CKA, salience, size and speed of the shown comparison."""
        from bertstudio.core.compression.report import compression_job

        if self.comparison is None or self._request is None or self._shown is None or not self._shown.compare:
            return
        self.compression_page.measure.setEnabled(False)
        self.compression_runner.start(compression_job, self._request, self.comparison, self._shown.compare)

    def erase(self, layer: int, concept: str, positions: str) -> None:
        """The Erase page: LEACE at `layer` on the concept file; the data file (when chosen) scored intact and
        erased."""
        from bertstudio.core.features.erase import erase_job

        try:
            source = self.model_bar.source_text()
            if not source:
                raise InputError("Choose the model to erase a concept from.")
            if not concept:
                raise InputError("Choose a concept file (text,concept columns).")
            evaluation = self.evaluation_request() if self.data_file.text().strip() else None
            request = self.model_bar.request(source)
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        self.erase_page.clear()
        self.erase_page.erase_button.setEnabled(False)
        self.erase_runner.start(erase_job, request, layer, concept, evaluation, positions)

    def _erased(self, erasure: Any) -> None:
        self.erase_page.show_erasure(erasure)
        self.notes.set_notes(erasure.notes)
        if erasure.comparison is not None:
            self.compare_page.show_comparison(erasure.comparison)

    def _on_result(self, result: Any) -> None:
        from bertstudio.core.evaluate.evaluation import EvalComparison

        self.comparison = result if isinstance(result, EvalComparison) else None
        self._shown = self._started
        self.evaluation = result.a if self.comparison is not None else result
        self.show_evaluation(self.evaluation)
        self.compression_page.set_comparison(self.comparison)
        if self.comparison is not None:
            self.compare_page.show_comparison(self.comparison)
        else:
            self.compare_page.clear()
        self.notes.set_notes(result.notes)
        if self.model_bar.info is None:  # the run loaded the model itself (through the shared cache)
            self.model_bar.info_label.setText(f"Evaluated {self.evaluation.model} ({self.evaluation.seconds:.1f} s, "
                                              f"{self.evaluation.n / max(self.evaluation.seconds, 1e-9):.0f} rows/s)")
        first = self.evaluation.metrics
        main = next((k for k in ("accuracy", "f1", "exact_match", "top1_accuracy") if k in first), "")
        self.status.emit(f"Evaluate: {self.evaluation.n} rows, {main} {first.get(main, 0):.4f}")
        self._update_stale()

    def show_evaluation(self, evaluation: Any) -> None:
        self.metrics_page.show_result(evaluation)
        self.confusion_page.show_result(evaluation)
        self.pages.setTabEnabled(self.pages.indexOf(self.confusion_page), evaluation.confusion is not None)
        self.curves_page.set_result(evaluation)
        self.pages.setTabEnabled(self.pages.indexOf(self.curves_page), self.curves_page.result is not None)
        self.errors_page.set_context(self._request, evaluation)
        self.projector_page.set_result(evaluation)

    def _on_projection_error(self, error: BaseException) -> None:
        self.projector_page.compute.setEnabled(True)
        self.projector_page.status.setText(getattr(error, "message", None) or str(error))

    def _open_row(self, row: int) -> None:
        evaluation = self.evaluation
        if evaluation is None or evaluation.dataset is None or not 0 <= row < evaluation.n:
            return
        example = evaluation.dataset.examples[row]
        self.open_row.emit(evaluation.task, evaluation.model, evaluation.adapter.inputs_of(example))

    def model_loaded(self, info: ModelInfo) -> None:
        self.erase_page.set_layers(info.layers or 0)
        if self._follow_checkpoint(info):
            return
        self.status.emit(f"Evaluate: {info.architecture} ready for {self.task_key}")
        self._update_stale()
        if self._run_on_load and self._run_on_load == info.request.source:
            self._run_on_load = ""
            self.run()

    def _follow_checkpoint(self, info: ModelInfo) -> bool:
        """A checkpoint loaded for a task whose head it lacks, but trained for another that Evaluate
        scores: switch to that task and load it again (a classifier loaded as a masked LM warned that
        results are meaningless, and the warning stayed after switching by hand: issue 29 #2)."""
        if not self._choose_trained(checkpoint_task(info.folder) if info.head_warning else None, info.folder):
            return False
        self.model_bar.load(info.request.source)
        return True

    def result_origin(self) -> RunState | None:
        """What the shown evaluation was computed from (the walkthrough and Export read it beside `origin_now`)."""
        return self._shown

    def origin_now(self) -> RunState | None:
        return self._run_state()

    def restore(self, state: dict[str, Any]) -> None:
        super().restore(state)
        self._refresh_columns()  # the restored file's columns
