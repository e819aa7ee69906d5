"""Tests: behavioural test suites (CheckList's MFT, INV, DIR) on a model, and the loop that fixes
what they find.

A suite is a starter suite (resources/suites) or a file; the model bar loads for the suite's task.
Run scores every case in the tab's worker (core.suites.jobs.suite_job: progress, Cancel), with a
second model beside it when "Compare with…" is on. The results page lists the tests and the
selected test's failing cases; a double-clicked case opens in its task's tab (`open_row`, as an
evaluated row does). "Fine-tune on failures" writes the user's training data plus the failing
cases of each test's seeded "train" half as a new file beside the data, and hands it to the Train
tab (`fine_tune_requested`). When that run ends (ui/wiring.py calls `training_finished`), the suite
and the held-out file re-run on the model before and after (core.suites.after.fix_report_job): the
results judge both on the held-apart halves, and a line says which cases trained the fix, which
measure it, and the held-out figure before/after, so a fix that breaks something else shows.
A suite whose templates use `{mask}` shows a masked-LM row: "Suggest words" asks that model
(core.suites.masks.suggestions_job) and lists its words, ticked; unticked words are left out.
The shown results keep their origin (ui/widgets/suite_origin.py); a changed model, suite, data,
held-out file or compared model marks them Out of date until the next run.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QPushButton

from bertstudio.core.errors import BertStudioError, InputError
from bertstudio.core.models import ModelInfo
from bertstudio.core.suites.tasks import suite_specs
from bertstudio.ui.tabs.frame import ComparingTab, error_note
from bertstudio.ui.tabs.run_lifecycle import RunLifecycle
from bertstudio.ui.tabs.tab_state import RunState, TabState
from bertstudio.ui.widgets.compare_panel import CompareSource
from bertstudio.ui.widgets.layouts import row
from bertstudio.ui.widgets.run_controls import ProgressLine, StaleBanner
from bertstudio.ui.widgets.suite_controls import SuiteFix, SuitePicker, fix_summary
from bertstudio.ui.widgets.suite_masks import SuiteMasks
from bertstudio.ui.widgets.suite_origin import NAMES as SUITE_FIELDS
from bertstudio.ui.widgets.suite_origin import suite_inputs, suite_origin
from bertstudio.ui.widgets.suite_results import SuiteResults, status_text


class TestsTab(ComparingTab):
    TASK = "tests"
    TITLE = "Tests"
    ORIGIN_NAMES = {**SUITE_FIELDS, "compare": "compared model"}  # the suite's parts, each named when it differs
    ORDER = 96
    # the workspace binds these by name, in this order (the mask model before the suite that may use it)
    BOUND = {"mask_model": "mask_panel.source", "suite": "chosen_suite", "data": "data_file",
             "held_apart": "held_apart", "held_out": "held_out_file"}
    __test__ = False  # pytest: not a test class

    open_row = Signal(str, str, object)  # spec key, model source, the task's input dataclass
    fine_tune_requested = Signal(str, str, str, str)  # (Train task key, base model, training file, output folder)
    label_requested = Signal(object)  # failures for Train's labelling table: [(text, expected label, test name)]
    MODEL_TASK = next(suite_specs()).key  # the model bar loads for the chosen suite's task (the first until read)

    def build(self) -> None:
        self.suite: Any = None  # the core Suite read from the chosen file
        self.suite_data: Any = None  # its JSON value (`{mask}` suggestions read it)
        self.suite_file: Path | None = None
        self.result: Any = None  # the last CheckResult
        self.fix_seed = 0
        self.last_request: Any = None  # the LoadRequest of the last run (the "before" of a fix)
        self._run_for: RunState | None = None  # what the run under way was started from
        self._shown_for: RunState | None = None  # what the shown results were computed from (issue 29)
        self.pending_fix: dict[str, Any] | None = None  # the run Train is doing for "Fine-tune on failures"
        self.masked_lm_source: Any = lambda: ""  # ui/wiring.py: the Fill-mask tab's loaded model
        self.picker = SuitePicker()
        self.picker.changed.connect(self._suite_changed)
        self.suite_info = self.picker.info
        self.mask_panel = SuiteMasks()
        self.mask_panel.suggest.connect(self.suggest_masks)
        self.mask_panel.changed.connect(self._masks_ticked)
        self.mask_panel.setVisible(False)
        self.compare_source = CompareSource(self.model_bar.source)
        self.run_button = QPushButton("Run suite")
        self.cancel_button = QPushButton("Cancel")
        self.progress_line = ProgressLine()
        self.fix = fix = SuiteFix()
        self.held_apart, self.data_file, self.held_out_file = fix.held_apart, fix.data_file, fix.held_out_file
        self.fix_button, self.label_button, self.fix_summary = fix.fix_button, fix.label_button, fix.summary
        self.held_apart.toggled.connect(self._redraw)
        self.fix_button.clicked.connect(self.fine_tune_on_failures)
        self.label_button.clicked.connect(self.label_failures)
        self.results = SuiteResults()
        self.results.opened.connect(self._open_case)
        # the results stay (a record), marked when the tab differs
        self.stale_banner = StaleBanner(self.results, action="Press Run suite (Ctrl+Enter) to update it.")
        self.body.addWidget(self.picker)
        self.body.addWidget(self.mask_panel)
        self.body.addLayout(row(self.compare_source, self.run_button, self.cancel_button, stretch=0))
        for widget in (self.fix, self.progress_line, self.stale_banner):
            self.body.addWidget(widget)
        self.body.addWidget(self.results, 1)
        self.runner.result.connect(self._on_result)
        for signal in (self.model_bar.source.editTextChanged, self.picker.combo.currentIndexChanged,
                       self.picker.combo.editTextChanged, self.mask_panel.changed, self.data_file.textChanged,
                       self.held_out_file.textChanged, self.compare_source.enabled.toggled,
                       self.compare_source.combo.editTextChanged, self.compare_source.int8.toggled,
                       self.runner.started, self.runner.finished):
            signal.connect(self._update_stale)
        self.lifecycle = RunLifecycle(self, self.runner, self.run, self.run_button, self.cancel_button,
                                      self.progress_line, self.notes)
        self._suite_changed()

    # -- the suite ---------------------------------------------------------------------------
    def _suite_changed(self) -> None:
        """Read the chosen suite (its errors show at once) and load models for its task."""
        from bertstudio.core.suites.builtin import suite_path
        from bertstudio.core.suites.masks import masked_templates
        from bertstudio.core.suites.suite import read_suite_data

        path = self.picker.path()
        if not path:
            return
        try:
            file = suite_path(path)
            data = read_suite_data(file)
        except BertStudioError as error:
            self.suite = None
            self.suite_info.setText("")
            self.notes.set_notes([error_note(error)])
            return
        if file != self.suite_file:
            self.mask_panel.clear()
            named = data.get("mask_model") if isinstance(data, dict) else None
            if isinstance(named, str) and named:
                self.mask_panel.source.setText(named)
        self.suite_file, self.suite_data = file, data
        masked = masked_templates(data)
        self.mask_panel.setVisible(bool(masked))
        if masked and not all(name in self.mask_panel.words for name in masked):
            self.suite = None
            self.notes.clear()
            self.suite_info.setText(f"{len(masked)} test(s) use {{mask}}: choose a masked LM and press "
                                    "Suggest words.")
            return
        self._build_suite()

    def _build_suite(self) -> None:
        """The suite from its JSON value and the ticked `{mask}` words; its errors show at once."""
        from bertstudio.core.suites.suite import parse_suite

        assert self.suite_file is not None
        try:
            self.suite = parse_suite(self.suite_data, self.suite_file.name, str(self.suite_file),
                                     self.mask_panel.ticked())
        except BertStudioError as error:
            self.suite = None
            self.suite_info.setText("")
            self.notes.set_notes([error_note(error)])
            return
        self.notes.clear()
        self.picker.describe(self.suite)
        self.model_bar.task = self.suite.task

    # -- {mask} -------------------------------------------------------------------------------
    def suggest_masks(self) -> None:
        """Ask the chosen masked LM for the words of every `{mask}` (in the worker)."""
        from bertstudio.core.suites.masks import suggestions_job

        source = self.mask_panel.source.text().strip() or self.masked_lm_source()
        if not source or self.suite_data is None:
            self.notes.set_notes([error_note(InputError("Choose the masked LM whose words fill {mask}.",
                                                        hint="Name one here, or load one in the Fill-mask tab."))])
            return
        self.mask_panel.source.setText(source)
        like = self.model_bar.request(source)  # its device and dtype
        self.runner.start(suggestions_job, source, self.suite_data, like, seed=self.fix_seed)

    def _show_masks(self, words: dict[str, list[str]]) -> None:
        self.mask_panel.show_words(words)
        self._build_suite()
        warning = getattr(words, "warning", "")  # the masked LM's head was not trained: its words are noise
        if warning:
            from bertstudio.core.notes import warning as warning_note

            self.notes.set_notes([warning_note(f"{{mask}} words from {self.mask_panel.source.text()}: {warning}")])

    def _masks_ticked(self) -> None:
        if self.suite_file is not None and self.mask_panel.words:
            self._build_suite()

    # -- running -------------------------------------------------------------------------------
    def run(self) -> None:
        from bertstudio.core.suites.jobs import suite_job

        try:
            if self.suite is None:
                raise InputError("Choose a test suite that reads without errors.")
            source = self.model_bar.source_text()
            if not source:
                raise InputError("Choose the model to test.")
            compare_source = self.compare_source.source()
            if self.compare_source.enabled.isChecked() and not compare_source:
                raise InputError("Choose the second model to compare with, or untick “Compare with…”.")
            request = self.model_bar.request(source)
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        self.last_request = request
        self._run_for = suite_origin(request, self._inputs_now(), compare_source)
        self.runner.start(suite_job, request, self.suite, compare_source)

    def _on_result(self, result: Any) -> None:
        from bertstudio.core.suites.after import FixReport

        if isinstance(result, dict):  # {mask} suggestions
            self._show_masks(result)
            return
        if isinstance(result, FixReport):
            self.fix_summary.setText(fix_summary(result))
            self.held_apart.setChecked(True)
            result = result.check
        else:
            self.fix_summary.setText("")
        self.result = result
        self._shown_for = self._run_for
        self._redraw()
        self.notes.set_notes([error_note(InputError(n)) for n in result.a.notes] if result.a.notes else [])
        from bertstudio.core.suites.fix_tasks import train_task

        if not train_task(result.a.suite.task):
            self.fix.allow(f"Fine-tuning on failures is not offered for {result.a.suite.task} suites.")
        elif result.a.failures == 0:
            self.fix.allow("No case failed: there is nothing to fine-tune on.")
        else:
            self.fix.allow("")
        self.label_button.setEnabled(self.fix_button.isEnabled())
        if self.model_bar.info is None:  # the run loaded the model itself (through the shared cache)
            self.model_bar.info_label.setText(f"Tested {result.a.model}")
        self.status.emit(status_text(result))

    def _redraw(self, *_args: Any) -> None:
        if self.result is None:
            return
        measured = None
        if self.held_apart.isChecked():
            from bertstudio.core.suites.fix import split_cases

            measured = {t.name: split_cases(t, self.fix_seed)[1] for t in self.result.a.suite.tests}
        self.results.show_result(self.result, measured)
        if self._shown_for is not None:  # the shown table follows the box: that view is the result's own
            inputs = replace(self._shown_for.inputs, held_apart=self.held_apart.isChecked())
            self._shown_for = self._shown_for._replace(inputs=inputs)
        self._update_stale()

    def _open_case(self, case: Any) -> None:
        """A failing case in its task's tab (the changed input where there is one: the one that moved)."""
        from bertstudio.core.evaluate.readers import Example
        from bertstudio.core.suites.tasks import shown
        from bertstudio.core.tasks.spec import spec_for

        if self.result is None:
            return
        spec = spec_for(self.result.a.suite.task)
        parts = case.perturbed if case.perturbed is not None else case.original
        if spec.suite is None or spec.evaluate is None:
            return
        example = Example(0, shown(parts), spec.suite.inputs(parts), spec.suite.gold)
        self.open_row.emit(spec.key, self.result.a.model, spec.evaluate.inputs_of(example))

    # -- fix it --------------------------------------------------------------------------------
    def fine_tune_on_failures(self) -> None:
        """The user's data plus the training half's failures, beside the data; Train opens with it, and
        its output folder becomes the compared model here (run again for before/after)."""
        from bertstudio.core.outputs import inside_package
        from bertstudio.core.suites.fix_tasks import write_fix

        if self.result is None:
            return
        try:
            data = self.data_file.text().strip()
            if not data:
                raise InputError("Choose your training data: the failures are added to a copy of it.")
            folder = None
            if inside_package(data):  # a demo file: the copy goes where the user says, never beside it
                folder = self.choose_fix_folder()
                if not folder:
                    raise InputError("The data is one of BERT Studio's own files: choose a folder for the copy.")
            path, added = write_fix(self.result.a, data, self.fix_seed, folder)
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        base = self.result.a.model
        output = str(Path(path).with_name(f"{Path(path).stem}-model"))
        suffix = 2
        while Path(output).exists():
            output = str(Path(path).with_name(f"{Path(path).stem}-model-{suffix}"))
            suffix += 1
        self.compare_source.set_source(output)
        self.held_apart.setChecked(True)
        self.pending_fix = {"request": self.last_request, "suite": self.result.a.suite, "output": output}
        self.show_message(f"Wrote {path.name} ({added} rows from the training halves of the tests). When training "
                          f"ends, the suite re-runs on {Path(base).name} and {Path(output).name}, judged on the "
                          "held-apart halves.")
        from bertstudio.core.suites.fix_tasks import train_task

        self.fine_tune_requested.emit(train_task(self.result.a.suite.task), base, str(path), output)

    def choose_fix_folder(self) -> str:
        """Where the data-plus-failures copy goes when the data is inside BERT Studio ('' if cancelled)."""
        return QFileDialog.getExistingDirectory(self, "Folder for the data plus the failures", str(Path.home()))

    def label_failures(self) -> None:
        """Every failing single-text case with its expected label, to Train's labelling table (issue 41)."""
        from bertstudio.core.suites.fix import failure_rows

        if self.result is not None:
            self.label_requested.emit([(row.text, row.label, row.test) for row in failure_rows(self.result.a)
                                       if not row.pair])

    def training_finished(self, output_dir: str) -> bool:
        """A training run ended (ui/wiring.py): if it is the fix asked for here, the suite and the
        held-out file run on before and after (True: then this tab is shown)."""
        from bertstudio.core.suites.after import fix_report_job

        pending = self.pending_fix
        if pending is None or pending["request"] is None or not Path(output_dir).is_dir():
            return False
        if Path(output_dir).expanduser().resolve() != Path(pending["output"]).expanduser().resolve():
            return False
        self.pending_fix = None
        if self.runner.busy:
            self.show_message(f"Training saved {output_dir}; press Run suite to compare it.")
            return True
        self.compare_source.set_source(output_dir)
        self.show_message("Training finished: the suite and the held-out file run on the model before and after…")
        held_out = self.held_out_file.text().strip() or None
        self._run_for = suite_origin(pending["request"], self._inputs_now(), output_dir)
        self.runner.start(fix_report_job, pending["request"], pending["suite"], output_dir, held_out, self.fix_seed)
        return True

    def model_loaded(self, info: ModelInfo) -> None:
        self.status.emit(f"Tests: {info.architecture} ready for {self.model_bar.task}")
        self._update_stale()

    # -- the shown results' origin (issue 29) ---------------------------------------------------
    def _inputs_now(self) -> Any:
        return suite_inputs(self.picker.path(), self.mask_panel.ticked(), self.data_file.text(),
                            self.held_apart.isChecked(), self.held_out_file.text())

    def read_state(self) -> TabState:
        """A run that loaded its model itself (through the shared cache; the bar says "Tested …") has
        that model loaded: the state says so, as a Load would."""
        state = super().read_state()
        shown = self.result_origin()
        if not state.loaded and self.model_bar.info is None and shown is not None and shown.model is not None:
            state.loaded = shown.model.source
        return state

    def result_origin(self) -> RunState | None:
        """Model, suite, data, held-apart/held-out settings and compared model of the shown results."""
        return self._shown_for if self.result is not None else None

    def origin_now(self) -> RunState | None:
        return suite_origin(self.model_bar.request(), self._inputs_now(), self.compare_source.source())

    @property
    def chosen_suite(self) -> str:
        return self.picker.path()

    @chosen_suite.setter
    def chosen_suite(self, path: str) -> None:
        if isinstance(path, str) and path:
            self.picker.set_path(path)

