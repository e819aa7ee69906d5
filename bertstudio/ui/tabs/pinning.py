"""Edit and pin for every task tab (mixed into TaskTab): keep an input and its result, edit, run,
and the tab shows the edit's result beside the pinned one through its own compare rendering
(A = the pinned input, B = the edit) with the spec's differences; the kept inputs are stepped
through (Alt+Left/Right) and saved in the workspace. "Explain A and B…" opens the pinned input's
and the shown edit's attributions side by side with their difference; while it is open, every edit
shown is explained again. "Trace why…" patches the edit with the pinned input's activations
(core.patching) for the tab's target. Also opens "What would flip this?"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QVBoxLayout

from bertstudio.core.errors import BertStudioError, InputError
from bertstudio.core.jobs import Outcome
from bertstudio.core.tasks.spec import TaskSpec
from bertstudio.ui.tabs.frame import ModelTab
from bertstudio.ui.widgets.pin_bar import PinBar, PinEntry, Pins, summary
from bertstudio.workers.jobs import pinned_job, task_job


def tops(diff: Any) -> str:
    """' (B: its top label and score; A: the pin's)' for a ranking diff (the first row's), else ''."""
    first = next(iter(diff), None) if isinstance(diff, list | tuple) else diff
    if first is None or not hasattr(first, "delta_of") or first.top_b is None:
        return ""
    b, a = first.delta_of(first.top_b), first.delta_of(first.top_a) if first.top_a is not None else None
    if b is None or b.score_b is None:
        return ""
    pinned = f"; A: {first.top_a} {a.score_a:.3f}" if a is not None and a.score_a is not None else ""
    return f" ({first.top_b} {b.score_b:.3f}{pinned})"


class PinnedInputs(ModelTab):
    """TaskTab's pins, on the template's own members (declared at the end; ui/tabs/base.py has them)."""

    spec: TaskSpec
    result: Any
    outcome: Any

    def build_pins(self, box: QVBoxLayout) -> None:
        self.pins = Pins()
        self.pin_run = ""  # "" a plain run; "one": a run compared with the pinned result; "both": both computed
        self.pin_comparison = ""  # the shown edit-vs-pin summary ("" when no edit is compared with its pin)
        self.flip_panel: Any = None
        self.pair_panel: Any = None
        self.trace_panel: Any = None
        searchable = self.spec.counterfactual is not None and self.spec.explain is not None
        # a tab whose Run returns more than an Outcome (Attention's bundle) is not compared with pins
        self.pinnable = self.job() is task_job and self.spec.compare is not None
        self.pin_bar = PinBar(can_flip=searchable, can_explain=self.pinnable and self.spec.explain is not None)
        self.pin_bar.pin_button.setVisible(self.pinnable)
        self.pin_bar.setVisible(self.pinnable or searchable)  # nothing to offer: no empty row above the results
        box.addWidget(self.pin_bar)
        self.pin_bar.pin_clicked.connect(self.pin)
        self.pin_bar.unpin_clicked.connect(self.unpin)
        self.pin_bar.stepped.connect(self.step_pin)
        self.pin_bar.flip_clicked.connect(self.open_flip)
        self.pin_bar.pair_clicked.connect(self.open_pair)
        self.pin_bar.trace_clicked.connect(self.open_trace)
        if self.pinnable:  # a tab without pins keeps Alt+Left/Right for itself (Attention: heads)
            context = Qt.ShortcutContext.WidgetWithChildrenShortcut
            QShortcut(QKeySequence("Alt+Left"), self, lambda: self.pin_bar.step_by(-1), context=context)
            QShortcut(QKeySequence("Alt+Right"), self, lambda: self.pin_bar.step_by(1), context=context)

    def show_pins(self, line: str = "") -> None:
        self.pin_bar.show_pins(self.pins, line)

    # -- pin, unpin, step ----------------------------------------------------------------------
    def pin(self) -> None:
        ran = self.last_ran()
        if self.result is None or ran is None:
            return
        self.pins.pin(self.state(), ran, self.result)
        self.show_pins("Pinned. Edit the input and run: the new result is shown beside it.")

    def unpin(self) -> None:
        self.pins.clear()
        self.show_pins()
        if self.result is not None and self.outcome is not None and self.outcome.result is not self.result:
            self.outcome = Outcome(self.result, notes=self.outcome.notes)
            self.show_outcome(self.outcome)

    def step_pin(self, index: int) -> None:
        if not 0 <= index < len(self.pins.entries):
            return
        self.pins.current = index
        entry = self.pins.entries[index]
        self.restore(entry.view)
        if entry.result is None or self.pins.pinned.result is None:
            self.clear_shown()
            self.show_pins("Not run with this model yet: Run (Ctrl+Enter).")
            return
        shown = self.compared(entry)
        self.outcome, self.result = shown, entry.result
        self.render_shown(shown)
        self.shown_now(entry.inputs)

    # -- running with a pin --------------------------------------------------------------------
    def start_pinned(self, request: Any, inputs: Any, compare_source: str | None, heads: Any) -> bool:
        """Called by Run: marks a run to compare with the pinned input; True when it started the job itself
        (both inputs in one job: the pinned result is not known for this model)."""
        self.pin_run = ""
        if not self.pins.active or not self.pinnable or compare_source or heads:
            if self.pins.active:
                self.show_pins("Pins are compared when no second model and no heads off are set.")
            return False
        pinned = self.pins.pinned
        if pinned.result is not None:
            self.pin_run = "one"
            return False
        if pinned.inputs is None:
            return False
        self.pin_run = "both"
        self.runner.start(pinned_job, self.spec, request, pinned.inputs, inputs)
        return True

    def pinned_outcome(self, outcome: Any) -> tuple[Any, Any]:
        """(what the tab shows, this input's own result) for a finished run."""
        kind, self.pin_run = self.pin_run, ""
        self.pin_comparison = ""
        if not kind or not self.pins.active:
            return outcome, outcome.result
        own = outcome.result
        if kind == "both":
            self.pins.pinned.result, own = outcome.result, outcome.second
        entry = self.pins.add(self.state(), self.last_ran(), own)
        return self.compared(entry, outcome.notes), own

    def compared(self, entry: PinEntry, notes: tuple[Any, ...] = ()) -> Outcome[Any]:
        pinned = self.pins.pinned
        self.pin_comparison = ""
        if entry is pinned or pinned.result is None or self.spec.compare is None:
            self.show_pins("The pinned input. Edit it and run to compare.")
            return Outcome(entry.result, notes=notes)
        diff = self.spec.compare(pinned.result, entry.result)
        self.pin_comparison = f"A: pinned, B: {entry.label}{tops(diff)}. {summary(diff)}"
        self.show_pins(self.pin_comparison)
        if self.pair_panel is not None and self.pair_panel.isVisible():  # an explanation is open: follow the edit
            self.pair_panel.refresh()
        return Outcome(pinned.result, entry.result, f"{entry.label} (A: pinned)", diff, notes,
                       first_source="pinned")

    def render_shown(self, outcome: Any) -> None:
        """The tab's show_outcome, then, when an edit is compared with its pin, a status line about that
        comparison: show_outcome's own line speaks of A, which is then the pinned input, not this edit, so it
        is held back (the status bar and the log read one line: the edit's result against its pin)."""
        if not self.pin_comparison:
            self.show_outcome(outcome)
            return
        blocker = QSignalBlocker(self)  # the tab's own signals only (status); its widgets still update
        try:
            self.show_outcome(outcome)
        finally:
            blocker.unblock()
        self.status.emit(f"{self.TITLE}: {self.pin_comparison}")

    # -- workspace -------------------------------------------------------------------------------
    def pins_state(self) -> dict[str, Any]:
        return {"pins": self.pins.to_json(), "pin": self.pins.current} if self.pins.active else {}

    def restore_pins(self, state: dict[str, Any]) -> None:
        """Pins from a workspace (checked by core/workspace_file): their inputs read back through the
        tab's own widgets; their results come with the next Run."""
        saved = [item for item in state.get("pins") or [] if isinstance(item, dict)]
        if not saved:
            self.pins.clear()
            self.show_pins()
            return
        now = self.state()
        inputs = []
        for item in saved:
            self.restore(item.get("view") or {})
            try:
                inputs.append(self.inputs())
            except BertStudioError:
                inputs.append(None)
        self.restore(now)
        self.pins.restore(saved, inputs, int(state.get("pin") or 0))
        self.show_pins("Pins restored: Run to compare.")

    # -- explain A and B -----------------------------------------------------------------------
    def open_pair(self) -> None:
        from bertstudio.ui.widgets.attribution_view import PinnedPairPanel

        if self.pair_panel is None:
            self.pair_panel = PinnedPairPanel(self.pair_source, self)
        self.pair_panel.show()
        self.pair_panel.raise_()
        self.pair_panel.refresh()

    def open_trace(self) -> None:
        """Trace why: the pinned input is the clean run, the edit shown the corrupted one (same source
        as Explain A and B); traced at once, and again only on request (it is many runs)."""
        from bertstudio.ui.widgets.patching_view import PatchingPanel

        if self.trace_panel is None:
            self.trace_panel = PatchingPanel(self.pair_source, self)
        self.trace_panel.show()
        self.trace_panel.raise_()
        self.trace_panel.refresh()

    def pair_source(self) -> tuple[Any, str, tuple[str, ...], tuple[str, ...], str]:
        """The model, the task, the pinned input's texts and the shown edit's (InputError when no edit is shown)."""
        from bertstudio.ui.widgets.pin_bar import comparing

        if not comparing(self.pins) or self.spec.explain is None:
            raise InputError("Pin an input, edit it and run: A and B are the pinned input and the edit shown.")
        entry = self.pins.entries[self.pins.current]
        texts = self.spec.explain.texts_of
        return (self.model_request(), self.spec.key, tuple(texts(self.pins.pinned.inputs)),
                tuple(texts(entry.inputs)), entry.label)

    # -- what would flip this ------------------------------------------------------------------
    def open_flip(self) -> None:
        from bertstudio.ui.widgets.counterfactual_panel import CounterfactualPanel

        if self.flip_panel is None:
            self.flip_panel = CounterfactualPanel(self.spec, self.flip_source, self)
            self.flip_panel.open_texts.connect(self.open_counterfactual)
            self.flip_panel.searched.connect(lambda line: self.status.emit(f"{self.TITLE}: {line}"))
        self.flip_panel.show()
        self.flip_panel.raise_()

    def flip_source(self) -> tuple[Any, Any]:
        return self.model_request(), self.inputs()

    def open_counterfactual(self, texts: tuple[str, ...]) -> None:
        """One click on a result: the edited input in the tab, run."""
        if self.spec.explain is not None:  # (the panel is offered only then)
            self.set_inputs(self.spec.explain.inputs_of(tuple(texts)))
            self.run()

    # -- a view's own part (the template's contract, ui/tabs/base.py) ---------------------------
    def inputs(self) -> Any:
        """The spec's input dataclass from the widgets; InputError for input that cannot work."""
        raise NotImplementedError

    def set_inputs(self, inputs: Any) -> None:
        """Fill the widgets from an input dataclass (examples, a dataset row)."""
        raise NotImplementedError

    def show_outcome(self, outcome: Any) -> None:
        """Show `outcome.result`, and `outcome.second` beside it when comparing/ablating."""
        raise NotImplementedError

    # -- from the template (ui/tabs/base.py) ----------------------------------------------------

    def run(self) -> None:
        raise NotImplementedError

    def job(self) -> Callable[..., Any]:
        raise NotImplementedError

    def last_ran(self) -> Any:
        raise NotImplementedError

    def clear_shown(self) -> None:
        raise NotImplementedError

    def shown_now(self, inputs: Any) -> None:
        raise NotImplementedError
