"""What would flip a multiple-choice prediction: the best ending (edited inputs are scored one
sequence per ending, a softmax over them: whatif.tasks.softmax_probabilities)."""

from __future__ import annotations

from bertstudio.core.models import LoadedModel
from bertstudio.core.tasks.multiple_choice import ChoiceResult
from bertstudio.core.whatif.tasks import Prediction


def predicted(loaded: LoadedModel, result: ChoiceResult) -> Prediction:
    best = result.best
    return Prediction(best.index, best.choice, best.score)
