"""Which tasks Evaluate scores: exactly the specs with an `evaluate` adapter (no list of its own).

The Evaluate tab's picker, the CLI's `--task` choices and every generic step of core/evaluate
read the adapter found here, so a task is evaluable where its spec says so and nowhere else.
It imports only the spec registry, so the task packages' own evaluate modules sit below it.
"""

from __future__ import annotations

from bertstudio.core.errors import InputError
from bertstudio.core.tasks.spec import EvaluateAdapter, TaskSpec, all_specs


def evaluable() -> dict[str, TaskSpec]:
    """The specs Evaluate scores, keyed by task key, in the specs' order."""
    return {key: spec for key, spec in all_specs().items() if spec.evaluate is not None}


def names_text() -> str:
    """'fill-mask, nsp, … or choice': the CLI names, for messages."""
    names = [spec.cli_name for spec in evaluable().values()]
    return f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else "".join(names)


def adapter_for(task: str) -> EvaluateAdapter:
    """The adapter of the task `task` (a spec key); a clear error for a task Evaluate cannot score."""
    spec = all_specs().get(task)
    if spec is None or spec.evaluate is None:
        raise InputError(f"Evaluation does not support the task '{task}'.", hint=f"Choose {names_text()}.")
    return spec.evaluate
