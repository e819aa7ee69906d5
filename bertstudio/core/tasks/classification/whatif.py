"""What would flip a classification: the label a result predicted, and the probabilities of a
batch of edited inputs with the function the task reads scores with (softmax, or sigmoid)."""

from __future__ import annotations

from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadedModel
from bertstudio.core.tasks.classification import ClassificationResult, steps
from bertstudio.core.whatif.tasks import Prediction


def predicted(loaded: LoadedModel, result: ClassificationResult) -> Prediction:
    if result.batch or len(result.rows) != 1:
        raise InputError("A counterfactual is searched for one text (or pair), not a batch of rows.")
    if result.kind == "regression":
        raise InputError("A regression model predicts a value, not a label: there is no label to flip.")
    top = result.first.top
    by_name = {str(v): int(k) for k, v in (loaded.model.config.id2label or {}).items()}
    return Prediction(by_name.get(top.label, 0), top.label, top.score)


def probabilities(loaded: LoadedModel, inputs: Any, outputs: Any) -> Any:
    """The task's own read of a batch's logits (a regression head never gets here: `predicted` refuses it)."""
    return steps.read(loaded, outputs.logits)
