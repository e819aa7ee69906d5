"""What the Explain tab's shown attribution was computed from, and how to name what changed since.

`ExplainOrigin` is the `inputs` of the tab's RunState (ui/tabs/tab_state.py): the task explained,
its texts (and the task tab's own input while a hand-off holds), the target and the method's
settings. Two are compared to mark the result Out of date; `ExplainState` names the part that
differs ("task", "target", "method settings"... rather than one "input" for all) and writes the
origin, never the boxes as they are now, into File → Export result. `MethodSettings` is what
the method picker reads that changes the numbers; `Handed` a task tab's hand-off. No Qt here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from bertstudio.ui.tabs.tab_state import INVALID, TabState, changed, plain


@dataclass(frozen=True)
class MethodSettings:
    """The method and those of its settings that change the numbers shown (None: not the method's):
    a result's origin holds one, so a steps change under LIME leaves its result current."""

    method: str
    steps: int | None = None
    converge: bool | None = None
    baseline: str | None = None
    samples: int | None = None
    seed: int | None = None
    faithfulness: bool = False


@dataclass(frozen=True)
class Handed:
    """What a task tab handed over: its task, its input's texts and own input object, the answer
    its result gave, and the text the box was given for them (an edit of the box ends the hand-off)."""

    task: str
    texts: tuple[str, ...]
    inputs: Any
    target: str | None  # the result's answer: its model's (another model explains its own answer)
    shown: str
    source: str  # the model that gave `target`


@dataclass(frozen=True)
class ExplainOrigin:
    """One explanation's inputs: `texts` are what the method ran on (INVALID: the box cannot run),
    `handed` the task tab's input object while its hand-off holds (None for typed text)."""

    task: str
    texts: Any
    handed: Any
    target: str | None
    settings: MethodSettings

    def differs_from(self, other: ExplainOrigin) -> str:
        """The first part that differs ("" when none): the banner's word for it."""
        if self.task != other.task:
            return "task"
        if self.texts != other.texts or self.handed != other.handed:
            return "input"
        if self.target != other.target:
            return "target"
        if self.settings.method != other.settings.method:
            return "method"
        return "method settings" if self.settings != other.settings else ""

    def to_json(self) -> dict[str, Any]:
        """The inputs as Export writes them (the settings go beside them)."""
        texts = [] if self.texts is INVALID else list(self.texts)
        return {"texts": texts, "task_input": plain(self.handed) if self.handed is not None else None,
                "target": self.target}


@dataclass
class ExplainState(TabState):
    """The Explain tab's state object: the explained task, target and method settings named apart."""

    @classmethod
    def of(cls, state: TabState) -> ExplainState:
        return cls(**{f.name: getattr(state, f.name) for f in dataclasses.fields(state)})

    def stale_reason(self) -> str:
        shown, now = self.result, self.now
        if shown is None or now is None:
            return ""
        if isinstance(shown.inputs, ExplainOrigin) and isinstance(now.inputs, ExplainOrigin):
            if shown.inputs.task != now.inputs.task:
                return "task"  # its model is the new task's too: the task is what a person changed
            reason = changed(shown, now)
            return shown.inputs.differs_from(now.inputs) if reason == "input" else reason
        return changed(shown, now)

    def result_json(self) -> dict[str, Any]:
        """{"task", "model", "inputs", "settings"}: the explained task and the origin's inputs and
        method settings (File → Export result's frame)."""
        shown = self.result
        if shown is None or not isinstance(shown.inputs, ExplainOrigin):
            return super().result_json()
        origin = shown.inputs
        model = shown.model.source if shown.model is not None else self.loaded
        return {"task": origin.task, "model": model, "inputs": origin.to_json(),
                "settings": {**plain(origin.settings), "heads_off": plain(shown.heads), "compare": shown.compare}}
