"""Precision-recall and ROC curves, and metrics at a chosen threshold, from an evaluation's class
probabilities (single-label tasks: classification, NSP).

Each class is scored one-vs-rest: its gold rows are the positives, its probability the score.
The curves and their areas are scikit-learn's (`precision_recall_curve`, `roc_curve`,
`average_precision_score`, `roc_auc_score`); the micro-average pools every (row, class) pair, as
scikit-learn's multi-class example does. `ThresholdTable` sorts one class's scores once, so the
metrics at any threshold are two binary searches (microseconds at 100,000 rows): a slider can
follow the mouse. A row counts as positive when its score is >= the threshold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bertstudio.core.errors import InputError

MICRO = "micro-average"


@dataclass(frozen=True)
class Curves:
    """One class's (or the micro-average's) PR and ROC curves; areas None where undefined."""

    label: str
    positives: int
    negatives: int
    precision: np.ndarray = field(repr=False, compare=False)
    recall: np.ndarray = field(repr=False, compare=False)
    pr_thresholds: np.ndarray = field(repr=False, compare=False)
    fpr: np.ndarray = field(repr=False, compare=False)
    tpr: np.ndarray = field(repr=False, compare=False)
    roc_thresholds: np.ndarray = field(repr=False, compare=False)
    average_precision: float | None = None
    roc_auc: float | None = None


@dataclass(frozen=True)
class AtThreshold:
    """One class against the rest at one threshold: counts and scikit-learn's binary metrics
    (precision and F1 are 0 where nothing is predicted positive, as zero_division=0 gives)."""

    label: str  # the positive class
    negative: str  # what the other rows are called: the other class (binary) or "not <label>"
    threshold: float
    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        return 2 * self.tp / (2 * self.tp + self.fp + self.fn) if self.tp + self.fp + self.fn else 0.0

    @property
    def accuracy(self) -> float:
        return (self.tp + self.tn) / self.n if self.n else 0.0

    @property
    def fpr(self) -> float:
        return self.fp / (self.fp + self.tn) if self.fp + self.tn else 0.0

    @property
    def labels(self) -> tuple[str, str]:
        return self.negative, self.label

    @property
    def matrix(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """Rows = gold (negative, positive), columns = predicted: scikit-learn's confusion_matrix."""
        return (self.tn, self.fp), (self.fn, self.tp)

    def to_json(self) -> dict[str, Any]:
        return {"class": self.label, "threshold": self.threshold, "precision": self.precision,
                "recall": self.recall, "f1": self.f1, "accuracy": self.accuracy,
                "confusion": {"labels": list(self.labels), "matrix": [list(row) for row in self.matrix]}}


@dataclass(frozen=True)
class ThresholdTable:
    """One class's scores sorted once; `at(threshold)` counts the rows at or above it by bisection."""

    label: str
    negative: str
    ascending: np.ndarray = field(repr=False, compare=False)  # the scores, sorted
    positives_below: np.ndarray = field(repr=False, compare=False)  # positives among the i lowest, i = 0..n

    @property
    def n(self) -> int:
        return len(self.ascending)

    @property
    def positives(self) -> int:
        return int(self.positives_below[-1])

    def at(self, threshold: float) -> AtThreshold:
        low = int(np.searchsorted(self.ascending, threshold, side="left"))  # rows scored below the threshold
        tp = self.positives - int(self.positives_below[low])
        fp = (self.n - low) - tp
        fn = self.positives - tp
        return AtThreshold(self.label, self.negative, float(threshold), tp, fp, fn, self.n - self.positives - fp)


def has_probabilities(evaluation: Any) -> bool:
    """Whether an evaluation carries class probabilities (single-label tasks) to draw curves from."""
    return getattr(evaluation, "probabilities", None) is not None and len(getattr(evaluation, "classes", ())) >= 2


def _checked(probabilities: Any, classes: Sequence[str], golds: Sequence[Any]) -> np.ndarray:
    values = np.asarray(probabilities)
    if values.ndim != 2 or values.shape != (len(golds), len(classes)) or len(classes) < 2:
        raise InputError("These results carry no class probabilities, so there are no curves to draw.",
                         hint="Curves and thresholds need a classification (single-label) evaluation.")
    return values


def one_vs_rest(probabilities: Any, classes: Sequence[str], golds: Sequence[Any], label: str
                ) -> tuple[np.ndarray, np.ndarray]:
    """(is positive, score) per row for class `label`: its gold rows against the rest, its probability."""
    values = _checked(probabilities, classes, golds)
    if label not in classes:
        raise InputError(f"The model has no class '{label}'.", hint=f"Its classes: {', '.join(classes)}.")
    truth = np.fromiter((label in gold_labels(g) for g in golds), dtype=bool, count=len(golds))
    return truth, values[:, list(classes).index(label)]


def gold_labels(gold: Any) -> frozenset[str]:
    """The classes a gold value is: one (single-label), or a multi-label row's set (a frozenset)."""
    return frozenset(gold) if isinstance(gold, frozenset) else frozenset((str(gold),))


def negative_name(classes: Sequence[str], label: str) -> str:
    """The other class of a binary model; "not <label>" where the rest are several classes."""
    others = [c for c in classes if c != label]
    return others[0] if len(others) == 1 else f"not {label}"


def default_positive(classes: Sequence[str]) -> str:
    """A binary model's positive class: its label id 1 (negative/positive, no/yes, NotNext/IsNext)."""
    return classes[1] if len(classes) == 2 else classes[0]


def _curves(label: str, truth: np.ndarray, scores: np.ndarray) -> Curves:
    """scikit-learn's curves; the areas from them as `average_precision_score` (its uninterpolated
    sum) and `roc_auc_score` (`auc` of the same ROC curve) compute them, without sorting twice more."""
    from sklearn.metrics import auc, precision_recall_curve, roc_curve

    positives = int(truth.sum())
    negatives = len(truth) - positives
    if positives == 0:  # nothing to recall: scikit-learn warns and its curves are meaningless
        empty = np.zeros(0)
        return Curves(label, 0, negatives, empty, empty, empty, empty, empty, empty)
    precision, recall, pr_thresholds = precision_recall_curve(truth, scores)
    ap = float(max(0.0, -np.sum(np.diff(recall) * np.asarray(precision)[:-1])))
    area: float | None = None
    if negatives:
        fpr, tpr, roc_thresholds = roc_curve(truth, scores)
        area = float(auc(fpr, tpr))
    else:  # one class only: ROC is undefined (scikit-learn warns)
        fpr = tpr = roc_thresholds = np.zeros(0)
    return Curves(label, positives, negatives, precision, recall, pr_thresholds, fpr, tpr, roc_thresholds, ap, area)


def class_curves(probabilities: Any, classes: Sequence[str], golds: Sequence[Any], label: str) -> Curves:
    truth, scores = one_vs_rest(probabilities, classes, golds, label)
    return _curves(label, truth, scores)


def micro_curves(probabilities: Any, classes: Sequence[str], golds: Sequence[Any]) -> Curves:
    """Every (row, class) pair pooled: one curve for all classes (scikit-learn's micro-average)."""
    values = _checked(probabilities, classes, golds)
    index = {c: i for i, c in enumerate(classes)}
    truth = np.zeros(values.shape, dtype=bool)
    for row, gold in enumerate(golds):
        for label in gold_labels(gold):
            if label in index:
                truth[row, index[label]] = True
    return _curves(MICRO, truth.ravel(), values.ravel())


def threshold_table(probabilities: Any, classes: Sequence[str], golds: Sequence[Any], label: str) -> ThresholdTable:
    truth, scores = one_vs_rest(probabilities, classes, golds, label)
    return _table(label, negative_name(classes, label), truth, scores)


def _table(label: str, negative: str, truth: np.ndarray, scores: np.ndarray) -> ThresholdTable:
    order = np.argsort(scores, kind="stable")
    below = np.concatenate([[0], np.cumsum(truth[order], dtype=np.int64)])
    return ThresholdTable(label, negative, np.ascontiguousarray(scores[order]), below)


def present_classes(classes: Sequence[str], golds: Sequence[Any]) -> list[str]:
    """The model's classes that occur in the gold labels, in the model's order (the curves' classes)."""
    seen = {label for g in golds for label in gold_labels(g)}
    return [c for c in classes if c in seen]


def summary(probabilities: Any, classes: Sequence[str], golds: Sequence[Any]) -> dict[str, Any]:
    """{"average_precision": {class: AP}, "roc_auc": {class: AUC or None}} over the classes in the gold,
    and, with more than two classes, "micro": the micro-average's two areas."""
    found = [class_curves(probabilities, classes, golds, label) for label in present_classes(classes, golds)]
    data: dict[str, Any] = {"average_precision": {c.label: c.average_precision for c in found},
                            "roc_auc": {c.label: c.roc_auc for c in found}}
    if len(classes) > 2:
        micro = micro_curves(probabilities, classes, golds)
        data["micro"] = {"average_precision": micro.average_precision, "roc_auc": micro.roc_auc}
    return data


def evaluation_summary(evaluation: Any) -> dict[str, Any] | None:
    """The curves' summary of an Evaluation, None where it has no class probabilities."""
    if not has_probabilities(evaluation):
        return None
    return summary(evaluation.probabilities, evaluation.classes, evaluation.golds)


def check_threshold(value: float) -> float:
    """A threshold on a probability: a finite number in [0, 1]."""
    if not (isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 1.0):
        raise InputError(f"The threshold must be a probability between 0 and 1 (got {value}).")
    return float(value)


@dataclass(frozen=True)
class ClassView:
    """What the Curves page draws for one class: its curves, its threshold table, the micro-average."""

    curves: Curves
    table: ThresholdTable
    micro: Curves | None = None


def class_view(probabilities: Any, classes: Sequence[str], golds: Sequence[Any], label: str,
               micro: bool = False) -> ClassView:
    """One class's curves and sorted scores (and the micro-average): the work behind a class pick."""
    pooled = micro_curves(probabilities, classes, golds) if micro and len(classes) > 2 else None
    truth, scores = one_vs_rest(probabilities, classes, golds, label)
    return ClassView(_curves(label, truth, scores), _table(label, negative_name(classes, label), truth, scores), pooled)
