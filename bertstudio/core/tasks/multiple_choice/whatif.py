"""What would flip a multiple-choice prediction: the best ending, and the task's read of edited inputs
(one sequence per ending, a softmax over them)."""

from __future__ import annotations

from typing import Any

from bertstudio.core.models import LoadedModel
from bertstudio.core.tasks.multiple_choice import ChoiceResult, steps
from bertstudio.core.whatif.tasks import Prediction


def predicted(loaded: LoadedModel, result: ChoiceResult) -> Prediction:
    best = result.best
    return Prediction(best.index, best.choice, best.score)


def probabilities(loaded: LoadedModel, inputs: Any, outputs: Any) -> Any:
    return steps.read(loaded, outputs.logits)
