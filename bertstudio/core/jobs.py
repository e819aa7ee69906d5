"""Run a task on the loaded model, and, when comparing, on a second model in the same job.

Every tab's worker job has this shape; keeping it here means supersede/cancel checks and the
second model's loading behave the same in every tab.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from bertstudio.core.models import LoadedModel, LoadRequest, load_model
from bertstudio.core.progress import TaskControl

R = TypeVar("R")


@dataclass(frozen=True)
class Outcome(Generic[R]):
    """Model A's result and, when comparing, model B's on the same input with the differences."""

    result: R
    second: R | None = None
    second_source: str = ""
    diff: Any = None  # what the task's compare(a, b) returned


def run_task(
    request: LoadRequest,
    control: TaskControl,
    run: Callable[[LoadedModel], R],
    compare_source: str | None = None,
    compare: Callable[[R, R], Any] | None = None,
) -> Outcome[R]:
    """`run(loaded)` on the requested model, then on `compare_source`'s with `compare(a, b)`."""
    loaded = load_model(request, control)
    control.check()
    result = run(loaded)
    if not compare_source:
        return Outcome(result)
    other = load_model(replace(request, source=compare_source), control)
    control.check()
    second = run(other)
    return Outcome(result, second, compare_source, compare(result, second) if compare else None)
