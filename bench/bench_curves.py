"""Evaluate's curves and threshold tuner at 100,000 rows vs scikit-learn called directly.

Curves: one class's PR and ROC curves with their areas and its sorted-score table (`class_view`,
what a class pick computes in a worker) vs `precision_recall_curve` + `roc_curve` +
`average_precision_score` + `roc_auc_score` on the same scores. Threshold: the metrics at one
threshold from the sorted table (`ThresholdTable.at`, what each slider step computes) vs
scikit-learn's `confusion_matrix` on the thresholded predictions (what a tuner without the table
would do per step). Ratio = ours / scikit-learn.
"""

from __future__ import annotations

import numpy as np
from common import Row, interleaved

ROWS = 100_000


def rows() -> list[Row]:
    from sklearn.metrics import (
        average_precision_score,
        confusion_matrix,
        precision_recall_curve,
        roc_auc_score,
        roc_curve,
    )

    from bertstudio.core.evaluate.curves import class_view

    rng = np.random.default_rng(0)
    truth = rng.random(ROWS) < 0.3
    golds = np.where(truth, "yes", "no").tolist()
    scores = np.clip(rng.normal(0.5, 0.2, ROWS) + 0.2 * truth, 0, 1).astype(np.float32)
    probabilities = np.stack([1 - scores, scores], axis=1)
    view = class_view(probabilities, ("no", "yes"), golds, "yes")

    def ours_curves() -> object:
        return class_view(probabilities, ("no", "yes"), golds, "yes")

    def sklearn_curves() -> object:
        return (precision_recall_curve(truth, scores), roc_curve(truth, scores),
                average_precision_score(truth, scores), roc_auc_score(truth, scores))

    thresholds = iter(np.tile(np.linspace(0, 1, 101), 1000))

    def ours_threshold() -> object:
        return view.table.at(float(next(thresholds)))

    def sklearn_threshold() -> object:
        return confusion_matrix(truth, scores >= 0.37, labels=[False, True])

    assert view.table.at(0.37).matrix == tuple(map(tuple, confusion_matrix(truth, scores >= 0.37)))
    curves_ours, curves_raw = interleaved(ours_curves, sklearn_curves, 7)
    at_ours, at_raw = interleaved(ours_threshold, sklearn_threshold, 30)
    return [Row(f"curves of one class, {ROWS:,} rows (vs scikit-learn's curves and areas)", curves_ours, curves_raw,
                "includes the sorted-score table the tuner reads"),
            Row(f"metrics at a threshold, {ROWS:,} rows (vs scikit-learn confusion_matrix)", at_ours, at_raw,
                f"{at_ours * 1e6:.0f} µs per slider step")]
