"""Dataset metrics computed by the reference libraries, so our numbers are theirs.

Labelled rows (classification, NSP, multiple choice): scikit-learn. The metrics only one task
has live in its package (NER's seqeval, QA's SQuAD functions, the masked LM's pseudo-perplexity:
core/tasks/<task>/evaluate.py). McNemar's test for two models on the same rows.
Every function takes task-shaped gold and predicted values, so slices reuse them on a subset.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ClassScores:
    precision: float
    recall: float
    f1: float
    support: int

    def to_json(self) -> dict[str, float | int]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1, "support": self.support}


@dataclass(frozen=True)
class Confusion:
    """Counts with rows = gold labels, columns = predicted labels (scikit-learn's convention)."""

    labels: tuple[str, ...]
    matrix: tuple[tuple[int, ...], ...]

    def to_json(self) -> dict[str, Any]:
        return {"labels": list(self.labels), "matrix": [list(row) for row in self.matrix]}


def ordered_labels(known: Sequence[str], *seen: Sequence[str]) -> list[str]:
    """The labels that occur in gold or predictions, in the model's order, then any others."""
    present = {label for values in seen for label in values}
    return [label for label in known if label in present] + sorted(present - set(known))


def label_metrics(golds: Sequence[str], predictions: Sequence[str], known: Sequence[str] = ()
                  ) -> tuple[dict[str, float], dict[str, ClassScores], Confusion]:
    """Accuracy, macro P/R/F1 and per-class scores, and the confusion matrix (scikit-learn)."""
    from sklearn.metrics import accuracy_score, confusion_matrix, precision_recall_fscore_support

    labels = ordered_labels(known, golds, predictions)
    precision, recall, f1, support = precision_recall_fscore_support(
        golds, predictions, labels=labels, zero_division=0)
    metrics = {
        "accuracy": float(accuracy_score(golds, predictions)),
        "macro_precision": float(precision.mean()),
        "macro_recall": float(recall.mean()),
        "macro_f1": float(f1.mean()),
    }
    per_class = {label: ClassScores(float(p), float(r), float(f), int(s))
                 for label, p, r, f, s in zip(labels, precision, recall, f1, support, strict=True)}
    with warnings.catch_warnings():  # a slice of one label makes a 1 x 1 matrix: that is its right shape
        warnings.filterwarnings("ignore", message="A single label was found")
        matrix = confusion_matrix(golds, predictions, labels=labels)
    return metrics, per_class, Confusion(tuple(labels), tuple(tuple(int(v) for v in row) for row in matrix))


def accuracy(golds: Sequence[Any], predictions: Sequence[Any]) -> dict[str, float]:
    from sklearn.metrics import accuracy_score

    return {"accuracy": float(accuracy_score(list(golds), list(predictions)))}


# The task's metrics in one shape, (golds, predictions, labels) -> (metrics, per label, confusion or None),
# named by each spec's EvaluateAdapter (`label_metrics` above already has it).
Scores = tuple[dict[str, float], dict[str, ClassScores], Confusion | None]


def accuracy_scores(golds: Sequence[Any], predictions: Sequence[Any], labels: Sequence[str] = ()) -> Scores:
    return accuracy(golds, predictions), {}, None


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties given their average rank (as Spearman's correlation ranks them)."""
    from scipy.stats import rankdata

    return [float(r) for r in rankdata(list(values))] if values else []


def correlations(gold: Sequence[float], predicted: Sequence[float]) -> dict[str, float]:
    """Pearson and Spearman (scipy); left out where undefined (fewer than two rows, a constant side),
    as training's validation (tasks/classification/train_regression.py) reports them."""
    import numpy as np
    from scipy.stats import pearsonr, spearmanr

    first, second = np.asarray(gold, float).ravel(), np.asarray(predicted, float).ravel()
    if len(first) < 2 or np.ptp(first) == 0 or np.ptp(second) == 0:
        return {}
    return {"pearson": float(pearsonr(first, second)[0]), "spearman": float(spearmanr(first, second)[0])}


@dataclass(frozen=True)
class McNemar:
    """Rows only A got right (`a_only`) vs only B (`b_only`); the two-sided p-values of H0: equal error rates."""

    a_only: int
    b_only: int
    p_exact: float  # binomial test on the discordant rows
    p_chi2: float  # chi-square with continuity correction (Edwards)

    def to_json(self) -> dict[str, float | int]:
        return {"a_only": self.a_only, "b_only": self.b_only, "p_exact": self.p_exact, "p_chi2": self.p_chi2}


def mcnemar(a_correct: Sequence[bool], b_correct: Sequence[bool]) -> McNemar:
    """McNemar's test on paired correctness (scipy's binomial and chi-square distributions)."""
    from scipy.stats import binomtest, chi2

    a_only = sum(a and not b for a, b in zip(a_correct, b_correct, strict=True))
    b_only = sum(b and not a for a, b in zip(a_correct, b_correct, strict=True))
    discordant = a_only + b_only
    if discordant == 0:
        return McNemar(0, 0, 1.0, 1.0)
    exact = float(binomtest(min(a_only, b_only), discordant, 0.5).pvalue)
    statistic = (abs(a_only - b_only) - 1) ** 2 / discordant
    return McNemar(a_only, b_only, min(1.0, exact), float(chi2.sf(statistic, 1)))
