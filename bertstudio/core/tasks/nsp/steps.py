"""Next sentence's pipeline contract: a pair (A, B) in, P(IsNext) and P(NotNext) out.

`read` is the softmax of the NSP head's two logits (label 0 = IsNext), written once: numpy logits
(the batch engine's, Evaluate's) give numpy probabilities in their own precision; torch outputs (the
tab's run, Explain's F, a counterfactual batch) give torch ones, half precision widened first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Unpack

from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.spec import TaskPipeline

if TYPE_CHECKING:
    from bertstudio.core.engine import RunOptions


def _pairs(rows: Sequence[tuple[str, ...]]) -> tuple[list[str], list[str | None]]:
    """(every sentence A, every sentence B) of (A, B) rows."""
    return [row[0] for row in rows], [row[1] for row in rows]


def encode(loaded: Any, rows: Sequence[tuple[str, ...]], control: TaskControl | None = None) -> Any:
    """Each (sentence A, sentence B) tokenized once by the batch engine."""
    from bertstudio.core import engine

    return engine.encode_all(loaded, *_pairs(rows), control)


def logits(loaded: Any, rows: Sequence[tuple[str, ...]], control: TaskControl | None = None,
           **options: Unpack[RunOptions]) -> tuple[Any, Any]:
    """(the rows `encode`d, their (rows, 2) float32 logits): tokenized while the batches run
    (engine.encode_run), for a whole file; `options` are engine.run's."""
    from bertstudio.core import engine

    return engine.encode_run_logits(loaded, *_pairs(rows), control, **options)


def read(loaded: Any, logits: Any) -> Any:
    """(rows, 2) probabilities: column 0 IsNext, column 1 NotNext."""
    if not hasattr(logits, "softmax"):  # numpy, from the engine
        import numpy as np

        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)
    raw = logits if logits.dtype.is_floating_point and logits.element_size() >= 4 else logits.float()
    return raw.softmax(-1)


PIPELINE = TaskPipeline(encode=encode, read=read)
