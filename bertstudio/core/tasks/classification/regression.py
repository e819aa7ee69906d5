"""Evaluate for a regression head (a sequence classifier whose config says problem_type
"regression", as `train --task regression` saves): the Classification adapter's steps, each
handing a regression model to the functions here and every other model to evaluate.py's.

A regression model's value per row is the raw output; the file's label column holds the gold
scores (any finite numbers, any scale). The metrics are Pearson's and Spearman's correlation
(scipy, as the similarity evaluation and the training validation report them), the mean squared
and mean absolute error. As in the similarity evaluation, a row's error is how far its
prediction's rank is from its gold score's rank; the errors are those rows, largest first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.evaluate.metrics import Scores, correlations, label_metrics, ranks
from bertstudio.core.evaluate.predict import Checked, EvalOptions, Prediction
from bertstudio.core.evaluate.readers import Dataset, Example
from bertstudio.core.json_values import text_number
from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.classification import evaluate, evaluate_multilabel, steps
from bertstudio.core.tasks.classification.multilabel import LabelSet
from bertstudio.core.tasks.classification.steps import score_kind


def is_regression(loaded: LoadedModel) -> bool:
    return score_kind(loaded.model.config) == "regression"


def prepare(loaded: LoadedModel, dataset: Dataset) -> Checked:
    """A regression model needs a number in every gold cell (the first other one is named by line)."""
    if not is_regression(loaded):
        return evaluate.prepare(loaded, dataset)
    bad = next((x for x in dataset.examples if text_number(x.gold) is None), None)
    if bad is not None:
        raise InputError(f"Line {bad.line} has the score '{bad.gold}', which is not a number.",
                         hint="This model predicts a value (a regression head): the label column needs numbers.")
    return [], ["A regression head: its value per row is scored by correlation with the gold scores."], \
        {"regression": True}


def predict(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl, options: EvalOptions,
            regression: bool = False, **keywords: Any) -> tuple[list[Prediction], list[Any]]:
    """The model's value per row (value, rank difference); other models: classification's predictor."""
    if not regression:
        return evaluate.predict(loaded, examples, control, options, **keywords)
    from bertstudio.core import engine

    encoded, logits = steps.logits(loaded, [x.inputs for x in examples], control, max_rows=options.batch_size)
    scores = steps.read(loaded, logits)
    values: list[float] = scores[:, 0].astype(float).tolist() if len(examples) else []
    predicted, gold = ranks(values), ranks([float(x.gold) for x in examples])
    n = len(examples)
    return [Prediction((v, abs(p - g)), f"{v:.4g} (rank {p:g} of {n}; gold rank {g:g})", v)
            for v, p, g in zip(values, predicted, gold, strict=True)], engine.cut_note(loaded, encoded,
                                                                               [x.line for x in examples])


def _regression(value: Any) -> bool:
    return isinstance(value, tuple)


def metrics(golds: Sequence[Any], predictions: Sequence[Any], labels: Sequence[str] = ()) -> Scores:
    """Correlations and errors of a regression head; classification's metrics for other models."""
    if predictions and isinstance(predictions[0], LabelSet):
        return evaluate_multilabel.metrics(golds, predictions, labels)
    if not predictions or not _regression(predictions[0]):
        return label_metrics(golds, predictions, labels)
    gold = [float(g) for g in golds]
    values = [float(p[0]) for p in predictions]
    scores = {"pearson": math.nan, "spearman": math.nan, **correlations(gold, values)}
    scores["mse"] = sum((v - g) ** 2 for v, g in zip(values, gold, strict=True)) / len(gold)
    scores["mae"] = sum(abs(v - g) for v, g in zip(values, gold, strict=True)) / len(gold)
    return scores, {}, None


def correct(gold: Any, value: Any) -> bool:
    """A regression row is right when its prediction has the rank its gold score has."""
    return float(value[1]) < 0.5 if _regression(value) else bool(gold == value)


def error_order(value: Any) -> float:
    """Regression errors largest rank difference first; classification keeps row order."""
    return -float(value[1]) if _regression(value) else 0.0
