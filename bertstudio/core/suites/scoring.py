"""The one place a suite's inputs meet the model: every distinct case of every test in one call.

Today that call is the task's Evaluate predictor (`spec.evaluate.predict`: classification through
transformers' text-classification pipeline in batches, with every class's probability); when the
shared batch engine lands, this function is the one to switch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.suites.tasks import Case, adapter, shown


def predictions(loaded: LoadedModel, task: str, cases: Sequence[Case], control: TaskControl,
                batch_size: int | None = None) -> tuple[list[Any], list[str]]:
    """(evaluate.predict.Prediction per case, in order; notes) for the task with key `task`."""
    from bertstudio.core.evaluate.predict import EvalOptions
    from bertstudio.core.evaluate.readers import Example
    from bertstudio.core.tasks.spec import spec_for

    evaluate = spec_for(task).evaluate
    if evaluate is None:
        raise ValueError(f"the task {task!r} has no Evaluate adapter to score suites with")
    suite = adapter(task)
    examples = [Example(i + 1, shown(case), suite.inputs(case), suite.gold) for i, case in enumerate(cases)]
    found, notes = evaluate.predict(loaded, examples, control, EvalOptions(batch_size=batch_size))
    return list(found), [str(note) for note in notes]
