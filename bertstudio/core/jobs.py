"""Run a task on the loaded model, and, when comparing, on a second model in the same job.

Every tab's worker job and every CLI command has this shape; keeping it here means
supersede/cancel checks, the second model's loading and the notes behave the same everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from bertstudio.core import engine
from bertstudio.core import notes as _notes
from bertstudio.core.errors import model_b_errors
from bertstudio.core.heads import HeadSet, format_heads
from bertstudio.core.models import LoadedModel, LoadRequest, load_model
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.spec import TaskSpec, jsonable, result_notes

R = TypeVar("R")


@runtime_checkable
class NamesFiles(Protocol):
    """Inputs that may name a file instead of holding its rows (Classification's CSV/TSV batch)."""

    def with_files_read(self, control: TaskControl) -> Any: ...


@dataclass(frozen=True)
class Outcome(Generic[R]):
    """Model A's result and, when comparing, model B's on the same input with the differences."""

    result: R
    second: R | None = None
    second_source: str = ""
    diff: Any = None  # what the task's compare(a, b) returned
    notes: tuple[Note, ...] = ()  # A's, then B's (prefixed "B: "): load warnings and the results' own
    first_source: str = ""  # what A is when it is not the loaded model: "pinned" (an edit compared with its pin)


def model_notes(loaded: LoadedModel) -> tuple[Note, ...]:
    """What loading found that a person must know: a head initialised at random."""
    warning = loaded.info.head_warning
    quantized = (_notes.info(loaded.info.quantized),) if loaded.info.quantized else ()
    return ((_notes.warning(warning),) if warning else ()) + quantized


def run_task(
    request: LoadRequest,
    control: TaskControl,
    run: Callable[[LoadedModel], R],
    compare_source: str | None = None,
    compare: Callable[[R, R], Any] | None = None,
) -> Outcome[R]:
    """`run(loaded)` on the requested model, then on `compare_source`'s with `compare(a, b)`."""
    from time import perf_counter

    from bertstudio.core.quantize import compare_request, size_speed_note

    loaded = load_model(request, control)
    control.check()
    started = perf_counter()
    result = run(loaded)
    seconds = perf_counter() - started
    found = model_notes(loaded) + result_notes(result)
    if not compare_source:
        return Outcome(result, notes=_notes.unique(found))
    with model_b_errors(compare_source):
        other = load_model(compare_request(request, compare_source), control)
        control.check()
        started = perf_counter()
        second = run(other)
    if loaded.info.quantized or other.info.quantized:  # a quantized variant: size and speed side by side
        found += (_notes.info(size_speed_note(loaded.info, other.info, seconds, perf_counter() - started)),)
    found += tuple(n.prefixed("B: ") for n in model_notes(other) + result_notes(second))
    diff = compare(result, second) if compare else None
    found += result_notes(diff)  # why no difference could be computed (tokenizers that split differently)
    return Outcome(result, second, compare_source, diff, _notes.unique(found))


def run_spec(
    spec: TaskSpec,
    request: LoadRequest,
    inputs: Any,
    control: TaskControl,
    compare_source: str | None = None,
    ablate: HeadSet = (),
    compare_ablated: HeadSet = (),
) -> Outcome[Any]:
    """The spec's run on model A (and B when comparing), with its compare and every note.

    `ablate`: heads switched off (as `head_mask = 0` did) while every model runs.
    `compare_ablated`: B is model A itself with these heads off (intact vs ablated, side by side)."""
    if spec.run is None:
        raise ValueError(f"{spec.key} cannot be run on one input")
    run = spec.run
    if isinstance(inputs, NamesFiles):  # read once, in the worker, before any model runs (A and B read the rows)
        inputs = inputs.with_files_read(control)
    if (ablate or compare_ablated) and request.runtime == "onnx":
        from bertstudio.core.errors import InputError

        raise InputError("Heads are switched off on the PyTorch runtime only; the exported file is one fixed graph.",
                         hint="Leave out the heads, or run the model on PyTorch (--runtime torch).")

    def on(loaded: LoadedModel, heads: HeadSet = ablate) -> Any:
        own = spec.inputs_for(loaded, inputs) if spec.inputs_for else inputs
        if not heads:
            return run(loaded, own, control)
        from bertstudio.core.explain.ablation import heads_switched_off

        with engine.holding(loaded) as model, heads_switched_off(model, heads):
            return run(loaded, own, control)

    if not compare_ablated:
        return run_task(request, control, on, compare_source, spec.compare)
    loaded = load_model(request, control)
    control.check()
    intact, ablated = on(loaded, ()), on(loaded, compare_ablated)
    label = f"heads off: {format_heads(compare_ablated)}"
    found = model_notes(loaded) + result_notes(intact)
    diff = spec.compare(intact, ablated) if spec.compare else None
    return Outcome(intact, ablated, label, diff, _notes.unique(found))


def outcome_json(
    source: str,
    outcome: Outcome[Any],
    result_json: Callable[[Any], Any] | None = None,
    differences_json: Callable[[Any], Any] | None = None,
) -> Any:
    """The one JSON form of an Outcome, for the CLI's --json and File → Export result… alike.

    One model: the result's own JSON (a list for some tasks). Compared: `{"model", "result",
    "compare": {"model", "result", "differences"[, "message"]}, "notes"}`, as the README promises.
    `result_json`/`differences_json` narrow the default `jsonable` (the CLI's attention --layer/--head).
    """
    as_result = result_json or jsonable
    if outcome.second is None:
        return as_result(outcome.result)
    compared = {"model": outcome.second_source, "result": as_result(outcome.second),
                "differences": (differences_json or _differences_json)(outcome)}
    if getattr(outcome.diff, "message", ""):  # why `differences` is empty (kept from the old JSON)
        compared["message"] = outcome.diff.message
    return {"model": source, "result": as_result(outcome.result), "compare": compared,
            "notes": jsonable(outcome.notes)}


def _differences_json(outcome: Outcome[Any]) -> Any:
    """Per-row differences of a result made from one input (`batch` False: classify one text or
    pair) are that row's difference itself; a batch keeps one per row."""
    diff = outcome.diff
    if getattr(outcome.result, "batch", None) is False and isinstance(diff, (list, tuple)) and len(diff) == 1:
        return jsonable(diff[0])
    return jsonable(diff)
