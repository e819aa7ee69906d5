"""Evaluate for a multi-label head (problem_type "multi_label_classification", as `train --multi-label`
saves): each gold cell is read as a label set (`a|b`, empty = none), each row's prediction is the set of
labels whose sigmoid probability is >= the threshold (EvalOptions.threshold, default 0.5), and the
metrics are scikit-learn's on the binarized matrices (multilabel.py). Classification's Evaluate steps
(evaluate.py) hand a multi-label model here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.evaluate.metrics import Scores
from bertstudio.core.evaluate.predict import Checked, EvalOptions, Prediction
from bertstudio.core.evaluate.readers import Dataset, Example
from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.classification import multilabel, steps


def is_multi_label(loaded: LoadedModel) -> bool:
    config = loaded.model.config
    return getattr(config, "problem_type", None) == multilabel.PROBLEM_TYPE and int(config.num_labels or 0) >= 2


def is_multi_label_result(evaluation: Any) -> bool:
    """Whether an Evaluation scored a multi-label head (its predictions are label sets)."""
    predictions: Sequence[Any] = getattr(evaluation, "predictions", ())
    return bool(predictions) and isinstance(predictions[0], multilabel.LabelSet)


def model_labels(loaded: LoadedModel) -> list[str]:
    return [str(loaded.info.id2label[i]) for i in sorted(loaded.info.id2label)]


def prepare(loaded: LoadedModel, dataset: Dataset) -> Checked:
    """The gold cells read as label sets (the dataset handed back for this model); a label the model
    does not know is refused with its line before any row runs."""
    known = model_labels(loaded)
    examples = []
    for example in dataset.examples:
        gold = multilabel.split_labels(str(example.gold))
        unknown = sorted(gold - set(known))
        if unknown:
            raise InputError(f"Line {example.line} has the label '{unknown[0]}', which the model does not know.",
                             hint=f"The model's labels: {', '.join(known)}. Relabel the file or choose the "
                                  "matching model.")
        examples.append(replace(example, gold=gold))
    note = (f"A multi-label head: each label is on where its sigmoid probability is >= the threshold; a gold "
            f"cell holds its labels separated by '{multilabel.SEPARATOR}'.")
    return known, [note], {"multi_label": True, "dataset": replace(dataset, examples=tuple(examples))}


def predict(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl,
            options: EvalOptions) -> tuple[list[Prediction], list[Any]]:
    """Every row's sigmoid probabilities through the batch engine; the labels at or over the threshold."""
    from bertstudio.core import engine

    encoded, logits = steps.logits(loaded, [x.inputs for x in examples], control, max_rows=options.batch_size,
                                   verb="Classified")
    names = tuple(model_labels(loaded))
    out: list[Prediction] = []
    if len(examples):
        probabilities = multilabel.sigmoid(logits).astype("float32")
        on = multilabel.predicted_matrix(probabilities, options.threshold)
        for row, flags in zip(probabilities, on, strict=True):
            chosen = multilabel.LabelSet(name for name, flag in zip(names, flags, strict=True) if flag)
            shown = str(chosen) or "(none)"
            score = float(min((row[i] for i, flag in enumerate(flags) if flag), default=1.0 - row.max()))
            out.append(Prediction(chosen, shown, score, row, names))
    return out, engine.cut_note(loaded, encoded, [x.line for x in examples])


def metrics(golds: Sequence[Any], predictions: Sequence[Any], labels: Sequence[str]) -> Scores:
    """micro/macro/samples F1, subset accuracy, Hamming loss and per-label P/R/F1 (scikit-learn)."""
    gold, _ = multilabel.binarize([str(g) for g in golds], labels)
    predicted, _ = multilabel.binarize([str(p) for p in predictions], labels)
    return multilabel.multilabel_scores(gold, predicted), multilabel.per_label_scores(gold, predicted, labels), None


def at_thresholds(probabilities: Any, classes: Sequence[str], golds: Sequence[Any],
                  thresholds: float | Sequence[float]) -> dict[str, float]:
    """The multi-label metrics again at other (per-label) thresholds."""
    gold, _ = multilabel.binarize([str(g) for g in golds], classes)
    return multilabel.multilabel_scores(gold, multilabel.predicted_matrix(probabilities, thresholds))


class LabelThresholds:
    """One threshold per label over a multi-label evaluation (Evaluate's threshold view tunes each
    label's on its curves) and the evaluation's metrics again at all of them."""

    def __init__(self, evaluation: Any, start: float = multilabel.DEFAULT_THRESHOLD) -> None:
        self.classes = [str(c) for c in evaluation.classes]
        self.probabilities = evaluation.probabilities
        self.gold, _ = multilabel.binarize([str(g) for g in evaluation.golds], self.classes)
        self.values = dict.fromkeys(self.classes, float(start))

    def of(self, label: str) -> float:
        return self.values.get(label, multilabel.DEFAULT_THRESHOLD)

    def set(self, label: str, value: float) -> None:
        if label in self.values:
            self.values[label] = float(value)

    def metrics(self) -> dict[str, float]:
        thresholds = [self.values[c] for c in self.classes]
        return multilabel.multilabel_scores(self.gold, multilabel.predicted_matrix(self.probabilities, thresholds))
