"""What a suite needs of a task, asked of its spec (`spec.suite`, a tasks.spec.SuiteAdapter); the
functions a spec names there live in its package (core/tasks/<task>/suite.py).

A case is a tuple of strings, one per part (classification: text [, pair]; NER: the text; QA:
question, context; NSP: sentence A, sentence B; multiple choice: prompt, choice, choice...), so
templates and perturbations work on strings for every task.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bertstudio.core.tasks.spec import Case, SuiteAdapter, TaskSpec, adapter_for

__all__ = ["Case", "adapter", "meets", "part_index", "same", "shown", "suite_specs"]


def suite_specs() -> Iterator[TaskSpec]:
    """The task specs suites can test (those with a SuiteAdapter and an Evaluate adapter to score with)."""
    from bertstudio.core.tasks.spec import all_specs

    return (spec for spec in all_specs().values() if spec.suite is not None and spec.evaluate is not None)


def adapter(task: str) -> SuiteAdapter:
    """The suite adapter of the task with key `task` (InputError where it has none)."""
    return adapter_for(task, SuiteAdapter)


def part_index(task: SuiteAdapter, name: str) -> int | None:
    return task.parts.index(name) if name in task.parts else None


def shown(case: Case) -> str:
    """What a person reads in a table: the parts joined as Evaluate joins a pair."""
    return " ||| ".join(case)


def same(task: SuiteAdapter, a: Any, b: Any) -> bool:
    """Whether two predicted values are the same prediction (INV)."""
    return bool(task.same(a, b)) if task.same is not None else bool(a == b)


def meets(task: SuiteAdapter, value: Any, shown_value: str, expect: Any) -> bool:
    """Whether a prediction is the expected one (MFT)."""
    return bool(task.meets(value, shown_value, expect)) if task.meets is not None else str(value) == str(expect)
