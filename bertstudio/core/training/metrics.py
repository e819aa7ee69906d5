"""Validation metrics for Trainer's `compute_metrics`, one function per trainable task.

Logits are reduced to argmax ids in `preprocess_logits_for_metrics`, so evaluation never
keeps a vocabulary-sized logit tensor per token (pre-training) in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Metrics = Callable[[Any], dict[str, float]]


def argmax(logits: Any, _labels: Any) -> Any:
    if isinstance(logits, tuple):
        return tuple(part.argmax(-1) for part in logits)
    return logits.argmax(-1)


def classification(labels: Sequence[str]) -> Metrics:
    """Accuracy and macro F1 over the classes."""
    import numpy as np

    def compute(pred: Any) -> dict[str, float]:
        predicted, gold = np.asarray(pred.predictions), np.asarray(pred.label_ids)
        f1s = []
        for k in range(len(labels)):
            tp = float(((predicted == k) & (gold == k)).sum())
            fp, fn = float(((predicted == k) & (gold != k)).sum()), float(((predicted != k) & (gold == k)).sum())
            f1s.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
        return {"accuracy": float((predicted == gold).mean()), "macro_f1": float(np.mean(f1s))}

    return compute


def entities(tags: Sequence[str]) -> set[tuple[int, int, str | None]]:
    """BIO spans (start, end, type); an I- without a matching B- starts a span, as seqeval does."""
    spans: set[tuple[int, int, str | None]] = set()
    start: int | None = None
    kind: str | None = None
    for i, tag in enumerate([*tags, "O"]):
        prefix, _, name = tag.partition("-")
        if start is not None and (prefix != "I" or name != kind):
            spans.add((start, i, kind))
            start, kind = None, None
        if prefix in ("B", "I") and start is None:
            start, kind = i, name
    return spans


def token_classification(labels: Sequence[str]) -> Metrics:
    """Token accuracy and entity-level precision, recall and F1 (first sub-token of each word)."""
    import numpy as np

    def compute(pred: Any) -> dict[str, float]:
        predicted, gold = np.asarray(pred.predictions), np.asarray(pred.label_ids)
        tp = fp = fn = 0
        for p_row, g_row in zip(predicted, gold, strict=True):
            keep = g_row != -100
            p_spans = entities([labels[i] for i in p_row[keep]])
            g_spans = entities([labels[i] for i in g_row[keep]])
            tp, fp, fn = tp + len(p_spans & g_spans), fp + len(p_spans - g_spans), fn + len(g_spans - p_spans)
        mask = gold != -100
        return {
            "accuracy": float((predicted[mask] == gold[mask]).mean()),
            "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0,
            "precision": tp / (tp + fp) if tp + fp else 0.0,
            "recall": tp / (tp + fn) if tp + fn else 0.0,
        }

    return compute


def pretraining(nsp: bool) -> Metrics:
    """Masked-token accuracy, and next-sentence accuracy where the model has that head."""
    import numpy as np

    def compute(pred: Any) -> dict[str, float]:
        predictions = pred.predictions if isinstance(pred.predictions, tuple) else (pred.predictions,)
        golds = pred.label_ids if isinstance(pred.label_ids, tuple) else (pred.label_ids,)
        mlm_p, mlm_g = np.asarray(predictions[0]), np.asarray(golds[0])
        mask = mlm_g != -100
        out = {"mlm_accuracy": float((mlm_p[mask] == mlm_g[mask]).mean()) if mask.any() else 0.0}
        if nsp and len(predictions) > 1 and len(golds) > 1:
            out["nsp_accuracy"] = float((np.asarray(predictions[1]) == np.asarray(golds[1])).mean())
        return out

    return compute
