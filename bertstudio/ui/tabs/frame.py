"""The kinds of tab, from the least the window needs to the task template.

- `StudioTab`: what the window needs of every tab: a title and place, a runner for its work,
  one notes area, status and error signals, devices once torch is up, a workspace entry.
  The Train tab is one: its model is a setting of the run, not a loaded model.
- `ModelTab`: a StudioTab with a model bar (Explain, Evaluate lay out their own body).
- `TaskTab` (ui/tabs/base.py): a ModelTab that is the template for one task spec.

Each kind only has what it really uses, so no tab inherits a widget it hides or a method
that would fail on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from bertstudio.core.models import LoadRequest, ModelInfo
from bertstudio.core.notes import Note
from bertstudio.ui.binding import read_bound, write_bound
from bertstudio.ui.local_models import LocalModelsIndex
from bertstudio.ui.model_bar import INT8_CHOICE, ModelBar
from bertstudio.ui.screen_fit import PageLayout, scroll_body
from bertstudio.ui.settings import AppSettings
from bertstudio.ui.tabs.tab_state import RunState, TabState
from bertstudio.ui.widgets.compare_panel import CompareSource
from bertstudio.ui.widgets.notes_area import NotesArea
from bertstudio.workers.runner import TaskRunner

if TYPE_CHECKING:
    from bertstudio.core.jobs import Outcome


def error_note(error: BaseException) -> Note:
    text = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
    hint = getattr(error, "hint", "")
    return Note("error", f"{text} {hint}".strip(), getattr(error, "details", "") or "")


class StudioTab(QWidget):
    TASK: ClassVar[str]  # the tab's key in the window (a task key, or its own: "evaluate")
    TITLE: ClassVar[str]
    ORDER: ClassVar[int] = 100  # position among the tabs, smaller first
    NOTES_ONE_LINE: ClassVar[bool] = False  # notes elided to one line (a task tab: they never move its result)
    NOTES_PLACED: ClassVar[bool] = False  # True: build() puts `notes` beside the controls they are about

    status = Signal(str)  # a short line for the status bar
    failed = Signal(object)  # an exception for the status bar and the log panel

    def __init__(self, settings: AppSettings, index: LocalModelsIndex, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.index = index
        self.runner = TaskRunner(self)
        self.notes = NotesArea(one_line=self.NOTES_ONE_LINE)
        self.message = self.notes  # the name tests read: tab.message.text()
        self.runner.error.connect(self._on_error)
        self._setup()
        self._build_layout()
        self._bound_defaults = self.state() if self.BOUND else {}  # what restore() gives a missing key

    # -- for subclasses ----------------------------------------------------------------------
    def _setup(self) -> None:
        """What a kind of tab adds before the layout (the model bar)."""

    def _scrolling_page(self) -> QVBoxLayout:
        """The layout of `page`, everything the tab shows, in a frameless scroll area: a window smaller
        than the page (900x600 with the log open) scrolls to every control instead of cutting them
        off or growing past the screen; at a normal size nothing scrolls and nothing changes."""
        self.page = scroll_body(self)
        return PageLayout(self.page)

    def _build_layout(self) -> None:
        """The tab's own `body` above the notes; `build()` fills it."""
        self.runner.started.connect(self.clear_message)
        layout = self._scrolling_page()
        self._add_header(layout)
        self.body = QVBoxLayout()
        layout.addLayout(self.body, 1)
        if not self.NOTES_PLACED:
            layout.addWidget(self.notes)
        self.build()

    def _add_header(self, layout: QVBoxLayout) -> None:
        """Widgets above the body (a model bar)."""

    def build(self) -> None:
        """Add the tab's widgets to `self.body`."""
        raise NotImplementedError

    def set_devices(self, devices: list[str], dtypes: dict[str, list[str]]) -> None:
        """The devices torch found (known only after the background import)."""

    # The tab's inputs and options by name, {json key: attribute} (ui/binding.py: a widget, a part
    # with its own state, or a value property): state()/restore() need no hand-written pair; the
    # order is the restore order.
    BOUND: ClassVar[dict[str, str]] = {}
    # The shown result's origin fields an Out-of-date mark names, {input field: word} (and "compare":
    # the compared model's word); {}: the first of model, heads off, compared model, input.
    ORIGIN_NAMES: ClassVar[dict[str, str]] = {}
    stale_banner: Any = None  # a tab that shows results sets its Out-of-date banner

    def state(self) -> dict[str, Any]:
        """The tab's inputs and options, as JSON values (for a workspace file)."""
        return read_bound(self, self.BOUND)

    def restore(self, state: dict[str, Any]) -> None:
        """Put back what `state()` returned (a missing key: the widget's value when the tab was built)."""
        write_bound(self, self.BOUND, state, self._bound_defaults)

    def show_pending_model(self, source: str) -> None:
        """A workspace will load `source` here when the tab is shown (a tab with a model bar says so)."""

    # -- the tab's state object (ui/tabs/tab_state.py) --------------------------------------
    def read_state(self) -> TabState:
        """The widgets read into the tab's state object: the one place widgets are read for the
        workspace, staleness, hand-offs and export (each kind of tab adds its own fields)."""
        return TabState(task=self.TASK, view=self.state(), has_model_bar=False, result=self.result_origin(),
                        now=self.origin_now(), names=dict(self.ORIGIN_NAMES))

    def stale_reason(self) -> str:
        """What changed since the shown result was computed, from the state object ("" if current,
        if none is shown, or while a run is replacing it)."""
        return "" if self.runner.busy else self.read_state().stale_reason()

    def _update_stale(self, *_args: Any) -> None:
        """The one Out-of-date rule of every tab: its banner names what `stale_reason` says."""
        if self.stale_banner is not None:
            self.stale_banner.show_for(self.stale_reason())

    def result_origin(self) -> RunState | None:
        """What the shown result was computed from (model, inputs, heads off, compared model); None
        while nothing is shown. A tab that shows a result says so: Out-of-date marks, Export and the
        walkthrough's check compare it with `origin_now`."""
        return None

    def origin_now(self) -> RunState | None:
        """What Run would compute now, in the same terms as `result_origin`."""
        return None

    def apply_state(self, state: TabState) -> None:
        """The one place a state object is written into the widgets (a restored workspace)."""
        self.restore(state.view)

    def workspace_state(self) -> dict[str, Any]:
        return self.read_state().to_json()

    def restore_workspace(self, state: dict[str, Any]) -> None:
        self.apply_state(TabState.from_json(self.TASK, state))

    # -- messages --------------------------------------------------------------------------
    def _on_error(self, error: BaseException) -> None:
        self.notes.set_notes([error_note(error)])
        self.failed.emit(error)

    def show_message(self, text: str, error: bool = False) -> None:
        """A note under the tab's controls; a refusal (`error`) goes to the Log too."""
        self.notes.set_notes([Note("error" if error else "warning", text)] if text else [])
        if error and text:
            self.log_refusal(text)

    def log_refusal(self, text: str) -> None:
        """A refusal in the Log and the status bar as well as beside its control: a note alone was
        easily missed (issue 40: a refused search said so below the fold and nowhere else)."""
        from bertstudio.core.errors import InputError

        self.failed.emit(InputError(text))

    def clear_message(self) -> None:
        self.notes.clear()


class ModelTab(StudioTab):
    ATTN_IMPLEMENTATION: ClassVar[str | None] = None
    # The task the model bar loads for when it is not TASK (Evaluate: TASK is the tab's own key).
    MODEL_TASK: ClassVar[str] = ""
    # The tab runs whole forwards only (no layers, hooks or gradients): its device list may offer
    # "CPU (ONNX Runtime)" for a folder with an exported model (ui/model_bar.py).
    ONNX_RUNTIME: ClassVar[bool] = False

    def _setup(self) -> None:
        self.model_bar = ModelBar(self.MODEL_TASK or self.TASK, self.settings, self.index,
                                  self.ATTN_IMPLEMENTATION, self, onnx=self.ONNX_RUNTIME)
        self.model_bar.loaded.connect(self._on_model_loaded)
        self.model_bar.failed.connect(self.failed)

    def _add_header(self, layout: QVBoxLayout) -> None:
        layout.addWidget(self.model_bar)

    def set_devices(self, devices: list[str], dtypes: dict[str, list[str]]) -> None:
        self.model_bar.set_devices(devices, dtypes)

    def model_loaded(self, info: ModelInfo) -> None:
        """React to a newly loaded model (enable buttons, insert its mask token...)."""

    @property
    def model_info(self) -> ModelInfo | None:
        return self.model_bar.info

    def model_request(self) -> LoadRequest | None:
        info = self.model_bar.info
        return info.request if info is not None else None

    def source_a(self, outcome: Outcome[Any]) -> str:
        """A's name in a comparison: the loaded model, or "pinned" when an edit is compared with its pin."""
        request = self.model_request()
        return outcome.first_source or (request.source if request else "A")

    def open_model(self, source: str) -> None:
        """Load `source` here (used by "Open in…" after training, and by an evaluated row): a hand-off,
        so the options that would make the tab use another model are reset first."""
        self.reset_for_handoff(source)
        self.model_bar.load(source)

    def reset_for_handoff(self, source: str) -> list[str]:
        """Untick what would make this tab use a model other than `source`, handed over from another
        tab (issue 40: Train -> Evaluate… with a Compare box ticked earlier failed, blaming "the
        model"): the compared model, the int8 number format, heads switched off. Says what it reset
        in the Log; returns it."""
        reset = []
        compare: CompareSource | None = getattr(self, "compare_source", None)
        if compare is not None and compare.enabled.isChecked():
            compare.enabled.setChecked(False)
            reset.append("Compare unticked")
        dtype = self.model_bar.dtype
        if dtype.currentText() == INT8_CHOICE:
            dtype.setCurrentIndex(max(0, dtype.findText("float32")))
            reset.append("number format back to float32")
        heads = getattr(self, "heads_off", None)
        if heads is not None and heads.text().strip():
            heads.setText("")
            reset.append("every head switched on")
        if reset:
            self.status.emit(f"{self.TITLE}: {source} handed over; {', '.join(reset)}, so it is the model used.")
        return reset

    def show_pending_model(self, source: str) -> None:
        """"Loading <model>…" rather than "No model loaded." while a restore is queued for this tab."""
        if self.model_bar.info is None and not self.model_bar.busy:
            self.model_bar.info_label.setText(f"Loading {source}…")

    def _on_model_loaded(self, info: ModelInfo) -> None:
        self.status.emit(f"{self.TITLE}: loaded {info.architecture} from {info.request.source}")
        self.model_loaded(info)

    def read_state(self) -> TabState:
        state = super().read_state()
        info = self.model_bar.info
        state.model, state.loaded, state.has_model_bar = self.model_bar.source_text(), "", True
        if info is not None:
            state.loaded = info.request.source
        return state

    def apply_state(self, state: TabState) -> None:
        super().apply_state(state)
        if state.model:
            self.model_bar.source.setEditText(state.model)


class ComparingTab(ModelTab):
    """A ModelTab with its own `compare_source` (Evaluate, Tests): the compared model is kept in the
    workspace as every task tab keeps it (ui/tabs/base.py)."""

    compare_source: CompareSource

    def read_state(self) -> TabState:
        """The model, the compare model and the inputs."""
        state = super().read_state()
        state.compare, state.has_compare = self.compare_source.source() or "", True
        return state

    def apply_state(self, state: TabState) -> None:
        super().apply_state(state)
        self.compare_source.set_source(state.compare or None)
