"""One plain object per tab (issue 29, DESIGN "a tab is one state object"): which model, which
task, the inputs and options, heads off, the compared model and the shown result's origin.

No Qt here: a test or a script can build one, compare two, or round-trip one through JSON. The
tab binds to it in one place each way (`StudioTab.read_state` reads the widgets into it,
`StudioTab.apply_state` writes it back); the workspace file, Out-of-date marks, hand-offs and
File → Export result read this object, never widget text.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from bertstudio.core.models import LoadRequest


class RunState(NamedTuple):
    """What a result was computed from: the model, the input, the heads off and the compared model."""

    model: LoadRequest | None
    inputs: Any
    heads: Any
    compare: str | None


INVALID = object()  # inputs that cannot run: never equal to what a result was computed from


def changed(shown: RunState, now: RunState, names: dict[str, str] | None = None) -> str:
    """What differs between the state a result was computed from and the state now ("" if nothing).

    `names`: a tab's declared origin fields (its input's field -> the word for it, and optionally
    "compare" -> the word for the compared model): every differing part is named ("validation file
    and output folder"), the model only when no declared field (a base model) names it already.
    Without them the first differing part: model, heads off, compared model, input."""
    if names:
        return " and ".join(_named_parts(shown, now, names))
    for name_of, name in (("model", "model"), ("heads", "heads off"), ("compare", "model compared with"),
                          ("inputs", "input")):
        if getattr(shown, name_of) != getattr(now, name_of):
            return name
    return ""


def _named_parts(shown: RunState, now: RunState, names: dict[str, str]) -> list[str]:
    fields = {key: word for key, word in names.items() if key != "compare"}
    was, is_ = shown.inputs, now.inputs
    if all(hasattr(was, key) and hasattr(is_, key) for key in fields):
        inputs = differing_fields(was, is_, fields)
    else:
        inputs = ["input"] if was != is_ else []
    parts = ["model"] if shown.model != now.model and not inputs else []
    parts += inputs
    if shown.heads != now.heads:
        parts.append("heads off")
    if shown.compare != now.compare:
        parts.append(names.get("compare", "model compared with"))
    return parts


def differing_fields(shown: Any, now: Any, names: dict[str, str]) -> list[str]:
    """The words (`names`: field -> word, in that order) for the fields of two origins that differ:
    what an Out-of-date mark lists when a tab names more than "input" ("output folder", "suite")."""
    return [word for field_name, word in names.items() if getattr(shown, field_name) != getattr(now, field_name)]


def plain(value: Any) -> Any:
    """An input dataclass, a heads tuple or a LoadRequest as JSON values."""
    from bertstudio.core.tasks.spec import jsonable

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    return jsonable(value)


@dataclass
class TabState:
    """A tab's whole state. `view` is the tab's own inputs and options as JSON (its `state()`);
    `result` what the shown result was computed from (None: nothing shown); `now` what the tab
    would run now (model, parsed inputs, heads, compare: what `result` is compared with)."""

    task: str
    model: str = ""  # the model field's text (what Load would load)
    loaded: str = ""  # the model that is loaded ("" none)
    compare: str = ""
    heads_off: str = ""
    view: dict[str, Any] = field(default_factory=dict)
    splitter: list[int] = field(default_factory=list)
    pins: dict[str, Any] = field(default_factory=dict)  # {"pins": [...], "pin": i} while pins are kept
    result: RunState | None = None
    now: RunState | None = None
    has_model_bar: bool = True
    has_compare: bool = False
    has_run_options: bool = False  # heads off / splitter / pins: the task template's
    names: dict[str, str] = field(default_factory=dict)  # the tab's declared origin fields (see `changed`)

    # -- workspace JSON (the shape core/workspace_file.py checks) ------------------------------
    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.has_model_bar:
            data["model"] = self.model
        if self.has_compare:
            data["compare"] = self.compare
        if self.has_run_options:
            data["heads_off"] = self.heads_off
            data["splitter"] = list(self.splitter)
        data["view"] = dict(self.view)
        if self.has_run_options:
            data.update(self.pins)
        return data

    @classmethod
    def from_json(cls, task: str, data: dict[str, Any]) -> TabState:
        """The fields a workspace file gives (already checked by core/workspace_file.py); a missing
        or mistyped one is left at its default."""

        def text(key: str) -> str:
            value = data.get(key)
            return value if isinstance(value, str) else ""

        view = data.get("view")
        sizes = data.get("splitter")
        pins: dict[str, Any] = {key: data[key] for key in ("pins", "pin") if key in data}
        return cls(task=task, model=text("model"), loaded=text("loaded"), compare=text("compare").strip(),
                   heads_off=text("heads_off"), view=dict(view) if isinstance(view, dict) else {},
                   splitter=[int(s) for s in sizes] if isinstance(sizes, list) and len(sizes) == 2 else [],
                   pins=pins, has_model_bar="model" in data, has_compare="compare" in data,
                   has_run_options="heads_off" in data)

    # -- what the shown result belongs to -------------------------------------------------------
    def stale_reason(self) -> str:
        """What changed since the shown result was computed ("model", "input"...); "" if current or none."""
        if self.result is None or self.now is None:
            return ""
        return changed(self.result, self.now, self.names)

    def result_json(self) -> dict[str, Any]:
        """{"task", "model", "inputs", "settings"} of the shown result (File → Export result's frame)."""
        shown = self.result
        model = shown.model.source if shown is not None and shown.model is not None else self.loaded
        return {"task": self.task, "model": model,
                "inputs": plain(shown.inputs) if shown is not None else None,
                "settings": {"heads_off": plain(shown.heads) if shown is not None else None,
                             "compare": shown.compare if shown is not None else None}}
