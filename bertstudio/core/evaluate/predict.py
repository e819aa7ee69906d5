"""What every task's Evaluate predictor shares: its options, the Prediction it returns per row, and
progress with a cancel check per batch.

Each task's predictor lives in its package (core/tasks/<task>/evaluate.py, named by its spec's
EvaluateAdapter): every predictor runs its forward passes on the batch engine (core/engine.py);
NER reads them with the token-classification pipeline's own postprocess, QA with its task's own
window postprocess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bertstudio.core.progress import TaskControl

# A task's `prepare`: (labels for metrics, notes, keywords for its predictor).
Checked = tuple[list[str], list[str], dict[str, Any]]


@dataclass(frozen=True)
class EvalOptions:
    # Rows per forward at most. None: the engine's, as many as its token budget holds (up to 256): a
    # cap of 32 left a GPU forward of short rows at ~2,000 tokens, far from filling it.
    batch_size: int | None = None
    seed: int = 0  # the masked LM's masking
    mask_share: float = 0.15  # share of a text's tokens that are masked (at least one)
    threshold: float = 0.5  # multi-label heads: a label is predicted where its probability is >= this


@dataclass(frozen=True)
class Prediction:
    """One row's prediction: the task-shaped value metrics read, what a person reads, and a score."""

    value: Any
    shown: str
    score: float
    # Single-label tasks: every class's probability (a row of one (rows, classes) array) and the
    # classes in its column order (one tuple shared by every row), for curves and thresholds.
    probabilities: Any = None
    classes: tuple[str, ...] = ()


def progress(control: TaskControl, done: int, total: int, verb: str) -> None:
    """A cancel check and "Tagged 64 of 900 rows" (a predictor calls it once per batch)."""
    control.check()
    control.report(f"{verb} {done} of {total} rows", done / total if total else 1.0)
