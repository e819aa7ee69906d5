"""Multiple choice's pipeline steps: the prompt paired with each ending, one sequence per ending, and
a softmax over a prompt's endings.

A choice head scores each (prompt, ending) sequence on its own (a linear layer per sequence), so
every pair can go through the batch engine as its own row, shaped (1, rows, tokens) for the head;
`read` then makes one prompt's logits its endings' probabilities. One `read` for the tab's run
(numpy, from the engine), Evaluate (numpy, float64), Explain's F and a counterfactual batch (torch).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Unpack

from bertstudio.core.progress import TaskControl

if TYPE_CHECKING:
    from bertstudio.core.engine import RunOptions


def _pairs(rows: Sequence[tuple[str, str]]) -> tuple[list[str], list[str | None]]:
    """(every prompt, every ending) of (prompt, ending) rows."""
    return [row[0] for row in rows], [row[1] for row in rows]


def encode(loaded: Any, rows: Sequence[tuple[str, str]], control: TaskControl | None = None) -> Any:
    """Each (prompt, ending) pair tokenized once by the batch engine."""
    from bertstudio.core import engine

    return engine.encode_all(loaded, *_pairs(rows), control)


def logits(loaded: Any, rows: Sequence[tuple[str, str]], control: TaskControl | None = None,
           **options: Unpack[RunOptions]) -> tuple[Any, Any]:
    """(the rows `encode`d, each (prompt, ending) row's logit as `forward` gives it): tokenized while the
    batches run (engine.encode_run); `options` are engine.run's."""
    from bertstudio.core import engine

    return engine.encode_run(loaded, *_pairs(rows), forward(loaded.model), control, **options)


def forward(model: Any) -> Any:
    """The engine's forward for a choice head: the batch's rows as the choices of one question."""

    def run(batch: Any) -> Any:
        return model(**{k: v.unsqueeze(0) for k, v in batch.inputs.items()}).logits[0]

    return run


def read(loaded: Any, logits: Any) -> Any:
    """Probabilities over the last axis (a prompt's endings), in the logits' own kind and precision
    (torch half precision widened first)."""
    if not hasattr(logits, "softmax"):  # numpy
        import numpy as np

        shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return shifted / shifted.sum(axis=-1, keepdims=True)
    raw = logits if logits.dtype.is_floating_point and logits.element_size() >= 4 else logits.float()
    return raw.softmax(-1)
