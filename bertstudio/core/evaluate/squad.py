"""SQuAD exact match and F1 with the official normalisation (v1.1, and v2.0's no-answer rule).

The `evaluate` package's "squad"/"squad_v2" metrics download their scripts from the Hub,
which this app cannot rely on (offline use), so the official script's functions are
restated here: `normalize_answer`, `compute_exact`, `compute_f1` from the SQuAD v2.0
evaluation script (identical to v1.1's for answerable questions). A gold answer list that is
empty (or holds only "") means "no answer": only an empty prediction scores, as in v2.0.
Scores are 0..1 per question; the dataset numbers are their mean x 100 (SQuAD convention).
"""

from __future__ import annotations

import collections
import re
import string
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower case, drop punctuation and the articles a/an/the, collapse white space."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def get_tokens(text: str) -> list[str]:
    return normalize_answer(text).split() if text else []


def compute_exact(gold: str, prediction: str) -> int:
    return int(normalize_answer(gold) == normalize_answer(prediction))


def compute_f1(gold: str, prediction: str) -> float:
    gold_tokens, pred_tokens = get_tokens(gold), get_tokens(prediction)
    if not gold_tokens or not pred_tokens:
        # No answer on either side: F1 is 1 if both agree there is none, else 0 (v2.0).
        return float(gold_tokens == pred_tokens)
    common = collections.Counter(gold_tokens) & collections.Counter(pred_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def _golds(answers: Sequence[str]) -> list[str]:
    """The official rule: gold answers that normalise to nothing are dropped; none left = no answer."""
    kept = [a for a in answers if normalize_answer(a)]
    return kept or [""]


def exact_match(answers: Sequence[str], prediction: str) -> int:
    """Best exact match over the gold answers (0 or 1)."""
    return max(compute_exact(a, prediction) for a in _golds(answers))


def f1(answers: Sequence[str], prediction: str) -> float:
    """Best token F1 over the gold answers (0..1)."""
    return max(compute_f1(a, prediction) for a in _golds(answers))


def squad_scores(golds: Sequence[Sequence[str]], predictions: Sequence[str]) -> dict[str, float]:
    """exact_match and f1 over a dataset, 0-100; with no-answer questions also the HasAns/NoAns parts."""
    if len(golds) != len(predictions):
        raise ValueError("one prediction per question")
    if not golds:
        return {"exact_match": 0.0, "f1": 0.0}
    exact = [exact_match(g, p) for g, p in zip(golds, predictions, strict=True)]
    f1s = [f1(g, p) for g, p in zip(golds, predictions, strict=True)]
    scores = {"exact_match": 100.0 * sum(exact) / len(exact), "f1": 100.0 * sum(f1s) / len(f1s)}
    has = [i for i, g in enumerate(golds) if _golds(g) != [""]]
    if len(has) < len(golds):
        no = [i for i in range(len(golds)) if i not in set(has)]
        for name, part in (("has_answer", has), ("no_answer", no)):
            if part:
                scores[f"{name}_exact"] = 100.0 * sum(exact[i] for i in part) / len(part)
                scores[f"{name}_f1"] = 100.0 * sum(f1s[i] for i in part) / len(part)
                scores[f"{name}_total"] = float(len(part))
    return scores
