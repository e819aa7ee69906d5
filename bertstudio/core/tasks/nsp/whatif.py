"""What would flip an NSP prediction: the label the pair was given, and the task's read of edited pairs."""

from __future__ import annotations

from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadedModel
from bertstudio.core.tasks.nsp import IS_NEXT, IS_NEXT_LABEL, NOT_NEXT, NOT_NEXT_LABEL, steps
from bertstudio.core.whatif.tasks import Prediction


def predicted(loaded: LoadedModel, result: Any) -> Prediction:
    if not hasattr(result, "is_next"):
        raise InputError("A counterfactual is searched for one pair: sentence A and one sentence B.")
    if result.is_next >= result.not_next:
        return Prediction(IS_NEXT, IS_NEXT_LABEL, result.is_next)
    return Prediction(NOT_NEXT, NOT_NEXT_LABEL, result.not_next)


def probabilities(loaded: LoadedModel, inputs: Any, outputs: Any) -> Any:
    """A batch of edited pairs read as the task reads one (softmax over IsNext, NotNext)."""
    return steps.read(loaded, outputs.logits)
