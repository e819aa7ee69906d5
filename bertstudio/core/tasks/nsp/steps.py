"""Next sentence's pipeline contract: a pair (A, B) in, P(IsNext) and P(NotNext) out.

`read` is the softmax of the NSP head's two logits (label 0 = IsNext), written once: numpy logits
(the batch engine's, Evaluate's) give numpy probabilities in their own precision; torch outputs (the
tab's run, Explain's F, a counterfactual batch) give torch ones, half precision widened first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.spec import TaskPipeline


def encode(loaded: Any, rows: Sequence[tuple[str, ...]], control: TaskControl | None = None) -> Any:
    """Each (sentence A, sentence B) tokenized once by the batch engine."""
    from bertstudio.core import engine

    return engine.encode_all(loaded, [row[0] for row in rows], [row[1] for row in rows], control)


def read(loaded: Any, logits: Any) -> Any:
    """(rows, 2) probabilities: column 0 IsNext, column 1 NotNext."""
    if not hasattr(logits, "softmax"):  # numpy, from the engine
        import numpy as np

        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)
    raw = logits if logits.dtype.is_floating_point and logits.element_size() >= 4 else logits.float()
    return raw.softmax(-1)


PIPELINE = TaskPipeline(encode=encode, read=read)
