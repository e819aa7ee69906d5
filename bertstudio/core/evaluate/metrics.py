"""Dataset metrics computed by the reference libraries, so our numbers are theirs.

Classification (and NSP, multiple choice): scikit-learn. NER: seqeval, entity level, strict
IOB2. QA: the official SQuAD functions (`squad.py`). Masked LM: top-k hits and the
pseudo-perplexity of the masked tokens. McNemar's test for two models on the same rows.
Every function takes task-shaped gold and predicted values, so slices reuse them on a subset.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bertstudio.core.evaluate import squad


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


@dataclass(frozen=True)
class MaskedStats:
    """One text's masked tokens: how many, how many the model ranked first / in its top 5, and the
    sum of -log P(gold token) (each token masked alone, so the sum gives pseudo-perplexity)."""

    masked: int
    top1: int
    top5: int
    nll: float
    gold: tuple[str, ...] = ()
    predicted: tuple[str, ...] = ()


def ordered_labels(known: Sequence[str], *seen: Sequence[str]) -> list[str]:
    """The labels that occur in gold or predictions, in the model's order, then any others."""
    present = {label for values in seen for label in values}
    return [label for label in known if label in present] + sorted(present - set(known))


def classification(golds: Sequence[str], predictions: Sequence[str], known: Sequence[str] = ()
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


def ner(golds: Sequence[Sequence[str]], predictions: Sequence[Sequence[str]]
        ) -> tuple[dict[str, float], dict[str, ClassScores]]:
    """Entity-level micro precision/recall/F1 and per type (seqeval, strict IOB2)."""
    from seqeval.metrics import classification_report
    from seqeval.scheme import IOB2

    gold_lists, pred_lists = [list(g) for g in golds], [list(p) for p in predictions]
    report = classification_report(gold_lists, pred_lists, mode="strict", scheme=IOB2, output_dict=True,
                                   zero_division=0)
    micro = report.pop("micro avg")
    for name in ("macro avg", "weighted avg"):
        report.pop(name, None)
    accuracy = sum(g == p for g, p in zip(gold_lists, pred_lists, strict=True)) / max(1, len(gold_lists))
    metrics = {"precision": float(micro["precision"]), "recall": float(micro["recall"]), "f1": float(micro["f1-score"]),
               "sentence_accuracy": accuracy}
    per_type = {name: ClassScores(float(v["precision"]), float(v["recall"]), float(v["f1-score"]), int(v["support"]))
                for name, v in sorted(report.items())}
    return metrics, per_type


def qa(golds: Sequence[Sequence[str]], predictions: Sequence[str]) -> dict[str, float]:
    return squad.squad_scores(golds, predictions)


def masked_lm(stats: Sequence[MaskedStats]) -> dict[str, float]:
    total = sum(s.masked for s in stats)
    if not total:
        return {"top1_accuracy": 0.0, "top5_accuracy": 0.0, "pseudo_perplexity": float("nan"), "masked_tokens": 0.0}
    return {
        "top1_accuracy": sum(s.top1 for s in stats) / total,
        "top5_accuracy": sum(s.top5 for s in stats) / total,
        "pseudo_perplexity": math.exp(sum(s.nll for s in stats) / total),
        "masked_tokens": float(total),
    }


def accuracy(golds: Sequence[Any], predictions: Sequence[Any]) -> dict[str, float]:
    from sklearn.metrics import accuracy_score

    return {"accuracy": float(accuracy_score(list(golds), list(predictions)))}


# The task's metrics in one shape, (golds, predictions, labels) -> (metrics, per label, confusion or None),
# named by each spec's EvaluateAdapter (`classification` above already has it).
Scores = tuple[dict[str, float], dict[str, ClassScores], Confusion | None]


def ner_scores(golds: Sequence[Any], predictions: Sequence[Any], labels: Sequence[str] = ()) -> Scores:
    values, per_type = ner(golds, predictions)
    return values, per_type, None


def qa_scores(golds: Sequence[Any], predictions: Sequence[Any], labels: Sequence[str] = ()) -> Scores:
    return qa(golds, predictions), {}, None


def masked_lm_scores(golds: Sequence[Any], predictions: Sequence[Any], labels: Sequence[str] = ()) -> Scores:
    return masked_lm(predictions), {}, None


def accuracy_scores(golds: Sequence[Any], predictions: Sequence[Any], labels: Sequence[str] = ()) -> Scores:
    return accuracy(golds, predictions), {}, None


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
