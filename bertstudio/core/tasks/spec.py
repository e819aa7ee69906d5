"""Task specs: the one place that says what a capability is.

A spec is the single source of a task's key, model class, head check, default model,
attention implementation, how to run it on a loaded model and how to compare two results.
`core/models.py`, the tabs, the CLI and the catalog read specs; no task key is written
twice (transformers' task registry in `pipelines/__init__.py` plays this role there).

A task module defines `SPEC = TaskSpec(...)` at its end; `all_specs()` finds them.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bertstudio.core.notes import Note

if TYPE_CHECKING:
    from bertstudio.core.models import LoadedModel
    from bertstudio.core.progress import TaskControl

# run(loaded, inputs, control) -> result; the result has `notes` and `to_json()`.
Runner = Callable[["LoadedModel", Any, "TaskControl"], Any]


@dataclass(frozen=True)
class TaskSpec:
    key: str  # LoadRequest.task, settings keys: "fill-mask", "classification"...
    title: str  # what a person reads: tab title, messages
    model_class: str  # the transformers Auto class that carries the task's head
    default_model: str  # what an online user gets without choosing
    command: str = ""  # CLI subcommand when it differs from `key` ("classify")
    # The saved class-name ending that proves a shared `classifier` head was trained for this task
    # (BERT's sequence, token and choice heads all have that name).
    trained_as: str = ""
    attn_implementation: str | None = None  # "eager" where attention weights are shown
    run: Runner | None = None  # None: a model class only (pre-training is driven by training/)
    compare: Callable[[Any, Any], Any] | None = None  # (result A, result B) -> differences (to_json-able)
    # The inputs rewritten for another model (its own mask token): used for model B when comparing.
    inputs_for: Callable[[LoadedModel, Any], Any] | None = None
    order: int = 100  # tabs and listings, smaller first

    @property
    def cli_name(self) -> str:
        return self.command or self.key


def result_notes(result: Any) -> tuple[Note, ...]:
    """The notes a result carries (every task result has a `notes` tuple of Note)."""
    return tuple(getattr(result, "notes", ()) or ())


@cache
def all_specs() -> dict[str, TaskSpec]:
    """Every spec under bertstudio.core.tasks, keyed by task key, in `order`."""
    found: list[TaskSpec] = []
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        namespace = importlib.import_module(f"{__package__}.{module.name}")
        spec = getattr(namespace, "SPEC", None)
        if isinstance(spec, TaskSpec):
            found.append(spec)
    return {spec.key: spec for spec in sorted(found, key=lambda s: (s.order, s.key))}


def spec_for(key: str) -> TaskSpec:
    specs = all_specs()
    if key not in specs:
        raise ValueError(f"unknown task {key!r} (known: {', '.join(specs)})")
    return specs[key]


def spec_for_command(command: str) -> TaskSpec:
    """The spec behind a CLI name ("classify") or a key ("classification")."""
    for spec in all_specs().values():
        if command in (spec.key, spec.cli_name):
            return spec
    raise ValueError(f"unknown task {command!r}")


def jsonable(value: Any) -> Any:
    """Results, differences and notes as plain JSON values (objects that know their JSON form say so)."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    return value
