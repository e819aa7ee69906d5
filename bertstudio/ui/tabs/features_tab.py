"""Features: what one layer of the encoder holds, as a sparse autoencoder's features (issue 42).

Open an SAE folder (`bertstudio features train`, or the Train page here): its model loads in the
bar, for the task chosen (the checkpoint's own by default). *Encode* runs the text through the
model and the SAE (every token, [CLS] and [SEP] included) and lists each token's strongest
features; clicking one opens its card: its top-activating corpus contexts, the histogram of its
values, and for a masked LM the tokens its decoder direction promotes through the MLM head. *Run
the task with it* runs the task on the text intact (A) and with the feature ablated or scaled in
the forward (B), side by side. Every job runs in a worker (core/features/jobs.py); the Train page
trains an SAE or a tuned lens with progress and Cancel.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QComboBox, QLineEdit, QPushButton, QTabWidget, QWidget

from bertstudio.core.errors import BertStudioError, InputError
from bertstudio.core.explain.inputs import explainable
from bertstudio.core.features import jobs
from bertstudio.core.features.sae_folder import SaeFolder
from bertstudio.core.features.tuned_lens import TunedLens
from bertstudio.core.jobs import Outcome
from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.core.tasks.spec import ExplainAdapter, adapter_for
from bertstudio.ui.tabs.frame import ModelTab, error_note
from bertstudio.ui.tabs.run_lifecycle import RunLifecycle
from bertstudio.ui.widgets.elided_label import ElidedLabel
from bertstudio.ui.widgets.features_card import FeatureCardView
from bertstudio.ui.widgets.features_tokens import TokensTable
from bertstudio.ui.widgets.features_train import TrainPage
from bertstudio.ui.widgets.forms import browse_button, text_box
from bertstudio.ui.widgets.layouts import row
from bertstudio.ui.widgets.run_controls import ProgressLine
from bertstudio.workers.runner import TaskRunner


def task_for(source: str, current: str) -> str:
    """The task a checkpoint is loaded for here: the one its head was trained for, or for a bare encoder
    the task that reads the encoder alone (no head initialised at random, no warning); else `current`."""
    from bertstudio.core.evaluate.adapters import checkpoint_task

    keys = {spec.key: spec for spec in explainable()}
    trained = checkpoint_task(source)
    if trained in keys:
        return str(trained)
    from bertstudio.core.model_folder import read_config

    try:
        names = read_config(Path(source).expanduser()).get("architectures") or []
    except BertStudioError:
        return current
    bare = [key for key, spec in keys.items() if spec.model_class == "AutoModel"]
    if bare and isinstance(names, list) and names and all(str(n).endswith("Model") for n in names):
        return bare[0]
    return current


class FeaturesTab(ModelTab):
    TASK = "features"
    TITLE = "Features"
    ORDER = 91
    BOUND = {"sae": "sae_path", "task": "task_combo", "text": "text", "corpus": "train_page.corpus",
             "output": "train_page.output"}
    MODEL_TASK = explainable()[0].key

    def build(self) -> None:
        self.found: SaeFolder | None = None
        self.encoded: jobs.Encoded | None = None
        self.result: Any = None  # the shown encoding (File → Export result)
        self.outcome: Outcome[Any] | None = None  # the shown intervention
        self._intervened_task = ""
        self.sae_path = QLineEdit()
        self.sae_path.setPlaceholderText("An SAE folder (sae.safetensors, sae.json)")
        self.sae_path.returnPressed.connect(self.open_sae)
        self.sae_info = ElidedLabel("No SAE open.")
        self.task_combo = QComboBox()
        for spec in explainable():
            self.task_combo.addItem(spec.title, spec.key)
        self.task_combo.setToolTip("The task whose answer a feature's ablation changes (the model loads for it)")
        self.task_combo.currentIndexChanged.connect(self._task_changed)
        self.text = text_box("A text to read with the SAE (one part per line for pairs)", 56)
        self.run_button = QPushButton("Encode")
        self.cancel_button = QPushButton("Cancel")
        self.progress_line = ProgressLine()
        self.tokens = TokensTable()
        self.card = FeatureCardView()
        self.train_page = TrainPage()
        self.pages = QTabWidget()
        self.pages.addTab(self.tokens, "Tokens")
        self.pages.addTab(self.card, "Feature")
        self.pages.addTab(self.train_page, "Train")
        browse = browse_button(self.sae_path, "SAE folder", folder=True, text="Open…", then=self.open_sae)
        self.body.addLayout(row("SAE", self.sae_path, browse, stretch=self.sae_path))
        self.body.addLayout(row("Task", self.task_combo, self.sae_info, stretch=self.sae_info))
        self.body.addWidget(self.text)
        self.body.addLayout(row(self.run_button, self.cancel_button, self.progress_line, stretch=self.progress_line))
        self.body.addWidget(self.pages, 1)
        self._connect_runners()

    def _runner(self, on_result: Callable[[Any], None]) -> TaskRunner:
        runner = TaskRunner(self)
        runner.result.connect(on_result)
        runner.error.connect(self._on_error)
        return runner

    def _connect_runners(self) -> None:
        """Opening an SAE, showing a card and training run beside Encode/intervene; Cancel stops them all."""
        self.open_runner = self._runner(self.adopt)
        self.card_runner = self._runner(self.card.show_card)
        self.train_runner = self._runner(self._trained)
        self.train_runner.started.connect(lambda: self._training(True))
        self.train_runner.finished.connect(lambda: self._training(False))
        self.train_runner.progress.connect(self.train_page.progress.show_event)
        self.train_page.cancel_button.setEnabled(False)
        self.train_page.cancel_button.clicked.connect(lambda: self.train_runner.cancel())
        self.train_page.train_button.clicked.connect(self.train_sae)
        self.train_page.lens_button.clicked.connect(self.train_lens)
        self.lifecycle = RunLifecycle(self, self.runner, self.run, self.run_button, self.cancel_button,
                                      self.progress_line, self.notes,
                                      also_cancels=(self.card_runner, self.open_runner, self.train_runner))
        self.runner.result.connect(self._on_result)
        self.tokens.feature_chosen.connect(self.show_feature)
        self.card.show_requested.connect(self.show_feature)
        self.card.intervene_requested.connect(self.intervene)

    # -- the SAE -------------------------------------------------------------------------------
    def open_sae(self) -> None:
        path = self.sae_path.text().strip()
        if not path:
            self.notes.set_notes([error_note(InputError("Choose an SAE folder."))])
            return
        self.open_runner.start(jobs.open_sae_job, path)

    def adopt(self, found: SaeFolder) -> None:
        """Show `found` and load its model for the chosen task (the checkpoint's own where it has one)."""
        self.found = found
        info = found.info
        self.sae_path.setText(str(found.path))
        self.sae_info.setText(f"layer {info.layer} of {info.model}: {info.m:,} features, k {info.k}; held-out FVE "
                              f"{info.fraction_of_variance_explained:.3f}, L0 {info.l0:.1f}, "
                              f"{info.dead_share:.1%} dead")
        self.card.set_features(info.m)
        self.tokens.clear_encoding()
        self.card.clear_card()
        self.result = self.outcome = self.encoded = None
        task = task_for(info.model, self.task_key)
        index = self.task_combo.findData(task)
        if index >= 0 and task != self.task_key:
            self.task_combo.setCurrentIndex(index)
        loaded = self.model_info
        if loaded is None or Path(loaded.folder).resolve() != Path(str(info.record.get("model_folder") or info.model)
                                                                    ).resolve() or loaded.request.task != self.task_key:
            self.model_bar.source.setEditText(info.model)
            self.model_bar.task = self.task_key
            self.model_bar.load(info.model)
        self.status.emit(f"Features: {info.m:,} features on layer {info.layer} of {info.model}")

    @property
    def task_key(self) -> str:
        return str(self.task_combo.currentData())

    def _task_changed(self, *_args: Any) -> None:
        self.model_bar.task = self.task_key
        info = self.model_info
        if info is not None and info.request.task != self.task_key and not self.model_bar.busy:
            self.model_bar.load(info.request.source)
        self.card.clear_intervention()

    def model_loaded(self, info: ModelInfo) -> None:
        self.train_page.set_layers(info.layers or 0)

    # -- running ---------------------------------------------------------------------------------
    def _request(self) -> LoadRequest:
        info = self.model_info
        if info is None:
            raise InputError("Load a model first (opening an SAE loads its own).")
        return info.request

    def _checked(self) -> tuple[LoadRequest, SaeFolder]:
        if self.found is None:
            raise InputError("Open an SAE folder first (or train one on the Train page).")
        return self._request(), self.found

    def run(self) -> None:
        """Encode: each token's features."""
        try:
            request, found = self._checked()
            text = self.text.toPlainText().strip()
            if not text:
                raise InputError("Type a text to encode.")
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        self.runner.start(jobs.encode_job, request, found, " ".join(text.splitlines()))

    def show_feature(self, feature: int) -> None:
        if self.found is None:
            return
        self.pages.setCurrentWidget(self.card)
        device = self.model_info.request.device if self.model_info else "cpu"
        self.card_runner.start(jobs.card_job, self.found, int(feature), device)

    def intervene(self, feature: int, scale: float) -> None:
        from bertstudio.core.explain.inputs import split_lines

        try:
            request, found = self._checked()
            texts = split_lines(self.task_key, self.text.toPlainText())
            if not texts:
                raise InputError("Type the text the task runs on above.",
                                 hint=adapter_for(self.task_key, ExplainAdapter).parts)
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        self._intervened_task = request.task
        self.runner.start(jobs.intervene_job, request, found, int(feature), float(scale), texts)

    def _on_result(self, value: Any) -> None:
        if isinstance(value, jobs.Encoded):
            self.encoded, self.result = value, value.encoding
            self.tokens.show_encoding(value.encoding)
            self.pages.setCurrentWidget(self.tokens)
            self.notes.set_notes(value.encoding.notes)
        elif isinstance(value, Outcome):
            self.outcome = value
            self.card.show_intervention(value, adapter_for(self._intervened_task, ExplainAdapter).summary)
            self.notes.set_notes(value.notes)

    # -- training ----------------------------------------------------------------------------------
    def _training(self, running: bool) -> None:
        page = self.train_page
        page.train_button.setEnabled(not running)
        page.lens_button.setEnabled(not running)
        page.cancel_button.setEnabled(running)
        if running:
            page.progress.start()
        else:
            page.progress.stop()

    def _train_inputs(self) -> tuple[LoadRequest, str, str]:
        page = self.train_page
        corpus, output = page.corpus.text().strip(), page.output.text().strip()
        if not corpus:
            raise InputError("Choose a corpus file (one text per line), or a demo corpus.")
        if not output:
            raise InputError("Choose an output folder.")
        return self._request(), corpus, output

    def train_sae(self) -> None:
        page = self.train_page
        try:
            request, corpus, output = self._train_inputs()
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        page.result.setText("")
        self.train_runner.start(jobs.train_sae_job, request, corpus, page.layer.value(), output,
                                page.expansion.value(), page.k.value(), page.epochs.value(),
                                page.overwrite.isChecked())

    def train_lens(self) -> None:
        page = self.train_page
        try:
            request, corpus, output = self._train_inputs()
            reads_layers = [s.key for s in explainable() if s.explain is not None and s.explain.per_layer is not None]
            if not reads_layers:
                raise InputError("No task reads a masked LM's layers.")
        except BertStudioError as error:
            self.notes.set_notes([error_note(error)])
            return
        page.result.setText("")
        lens_request = LoadRequest(request.source, reads_layers[0], request.device, request.dtype)
        self.train_runner.start(jobs.train_lens_job, lens_request, corpus, output, page.epochs.value(),
                                page.overwrite.isChecked())

    def _trained(self, value: Any) -> None:
        if isinstance(value, SaeFolder):
            self.train_page.show_sae(value)
            self.adopt(value)
        elif isinstance(value, TunedLens):
            self.train_page.show_lens(value)

    def result_view(self) -> QWidget:
        return self.pages
