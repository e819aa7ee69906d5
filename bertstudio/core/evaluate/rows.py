"""A dataset row as its task's input (so the error browser opens it in the task's own tab), and
the row shapes several tasks share. Each task's own row functions (its gold as a person reads it,
whether a prediction is right, its slice label) live in core/tasks/<task>/evaluate.py."""

from __future__ import annotations

from typing import Any

from bertstudio.core.evaluate.readers import Example


def row_inputs(task: str, example: Example) -> Any:
    """The spec's input dataclass for one evaluated row (what that task's tab `set_inputs` takes)."""
    from bertstudio.core.tasks.spec import EvaluateAdapter, adapter_for

    return adapter_for(task, EvaluateAdapter).inputs_of(example)


def pair_of_two(example: Example) -> tuple[str, str | None]:
    """What the projector embeds of a two-part row: (text, pair), (sentence A, B), (question, context)."""
    first, second = example.inputs
    return str(first), (str(second) if second else None)
