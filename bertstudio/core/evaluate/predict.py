"""What every task's Evaluate predictor shares: its options, the Prediction it returns per row, and
progress with a cancel check per batch.

Each task's predictor lives in its package (core/tasks/<task>/evaluate.py, named by its spec's
EvaluateAdapter): classification, regression, NSP, similarity and multiple choice run on the batch
engine (core/engine.py); NER on the token-classification pipeline, QA through `tasks.qa.answer`, the
masked LM on its own batched loop.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.nsp import NSP_CLASSES  # noqa: F401 - core/suites/tasks.py imports it from here (for now)

BATCH_SIZE = 32
T = TypeVar("T")
# A task's `prepare`: (labels for metrics, notes, keywords for its predictor).
Checked = tuple[list[str], list[str], dict[str, Any]]
# Rows per tokenizer call before the model runs: one call over 200,000 rows took seconds in which
# neither Cancel nor Ctrl+C (a signal waits for the call to return) was seen.
TOKENIZE_CHUNK = 1024


@dataclass(frozen=True)
class EvalOptions:
    batch_size: int = BATCH_SIZE
    seed: int = 0  # the masked LM's masking
    mask_share: float = 0.15  # share of a text's tokens that are masked (at least one)


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


def chunks(items: Sequence[T], control: TaskControl, verb: str) -> Iterator[tuple[int, Sequence[T]]]:
    """(start, slice) of TOKENIZE_CHUNK items, with a cancel check and progress before each."""
    for start in range(0, len(items), TOKENIZE_CHUNK):
        control.check()
        control.report(f"{verb} {start} of {len(items)} rows", start / len(items))
        yield start, items[start:start + TOKENIZE_CHUNK]
    control.check()
