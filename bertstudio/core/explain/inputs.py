"""Between a task's own input dataclass and the plain texts the explanations take.

A task tab's "Explain…" hands over its spec's input (FillMaskInput, QAInput...); the Explain tab
and the CLI also take typed parts. Each task's spec names its two directions (`ExplainAdapter.
texts_of` / `inputs_of`, in core/tasks/<task>/explain.py), so the tab and the CLI agree on what
"the input" of a task is, and nothing here switches on a task key.
"""

from __future__ import annotations

from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.tasks.spec import ExplainAdapter, TaskSpec, adapter_for, specs_with


class WrongParts(InputError):
    """The input has too few or too many parts for its task; `takes` says what it takes
    (the CLI writes "<command> takes ...", naming the command the person typed)."""

    def __init__(self, takes: str, hint: str = "") -> None:
        super().__init__(f"This task takes {takes}.", hint=hint)
        self.takes = takes


def explainable() -> tuple[TaskSpec, ...]:
    """The specs with an Explain adapter, in their order (the Explain tab's and the CLI's list)."""
    return tuple(specs_with(ExplainAdapter).values())


def texts_of(task: str, inputs: Any) -> tuple[str, ...]:
    """The texts of a task's input dataclass (the first row or candidate where there are several)."""
    return tuple(adapter_for(task, ExplainAdapter).texts_of(inputs))


def task_inputs(task: str, texts: tuple[str, ...]) -> Any:
    """The task's own input dataclass from texts (for running the task itself, e.g. heads pruned)."""
    return adapter_for(task, ExplainAdapter).inputs_of(tuple(texts))


def target_of(task: str, result: Any) -> str | None:
    """The --target a task's own result answered (its label, top candidate, choice...): a hand-off
    explains that answer without a forward pass to find it again. None: the task's default."""
    adapter = adapter_for(task, ExplainAdapter)
    return None if adapter.target_of is None or result is None else adapter.target_of(result)


def split_lines(task: str, text: str) -> tuple[str, ...]:
    """Typed input, one part per line (a task read as one text keeps its lines together)."""
    lines = tuple(line.strip() for line in text.splitlines() if line.strip())
    if adapter_for(task, ExplainAdapter).one_text:
        return (" ".join(lines),) if lines else ()
    return lines


def count_parts(texts: tuple[str, ...], low: int, high: int | None, takes: str, hint: str = "") -> None:
    """WrongParts unless `texts` has `low` to `high` parts (None: any number more)."""
    if len(texts) < low or (high is not None and len(texts) > high):
        raise WrongParts(takes, hint)


def text_of(inputs: Any) -> tuple[str, ...]:
    """The one text of a task input that has a `text` field (fill-mask, NER)."""
    text = getattr(inputs, "text", None)
    if text is None:
        raise InputError(f"This {type(inputs).__name__} cannot be explained.")
    return (str(text),)
