"""What would flip a multiple-choice prediction: the best ending, and the task's read of edited inputs
(one sequence per ending, a softmax over them)."""

from __future__ import annotations

from typing import Any

from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.multiple_choice import ChoiceResult, steps
from bertstudio.core.whatif.tasks import Prediction


def predicted(loaded: LoadedModel, result: ChoiceResult) -> Prediction:
    best = result.best
    return Prediction(best.index, best.choice, best.score)


def probabilities(loaded: LoadedModel, inputs: Any, outputs: Any) -> Any:
    return steps.read(loaded, outputs.logits)


def logits(loaded: LoadedModel, batch: list[tuple[str, ...]], control: TaskControl) -> Any:
    """(inputs, endings) logits of edited prompts with their endings: each (prompt, ending) a row of the
    batch engine, read as the choice head reads one question's rows."""
    import numpy as np

    _, found = steps.logits(loaded, [(t[0], ending) for t in batch for ending in t[1:]], control, progress=False)
    return np.stack(found).reshape(len(batch), -1)
