"""Which tasks Evaluate scores: exactly the specs with an `evaluate` adapter (no list of its own).

The Evaluate tab's picker, the CLI's `--task` choices and every generic step of core/evaluate
read the adapter its spec holds (`tasks.spec.adapter_for(task, EvaluateAdapter)`), so a task is
evaluable where its spec says so and nowhere else. It imports only the spec registry, so the task
packages' own evaluate modules sit below it.
"""

from __future__ import annotations

from bertstudio.core.tasks.spec import EvaluateAdapter, TaskSpec, specs_with


def evaluable() -> dict[str, TaskSpec]:
    """The specs Evaluate scores, keyed by task key, in the specs' order."""
    return specs_with(EvaluateAdapter)
