"""Classification's pipeline contract: a text (and its pair) in, every label's score out.

`read` is TextClassificationPipeline.postprocess's rule (sigmoid for a multi-label or one-logit
head, softmax for single-label, the raw value for regression), written once: numpy logits (the
batch engine's) give numpy scores as the pipeline makes them; torch outputs (Explain's F, a
counterfactual batch) give torch scores, half precision widened first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Unpack

from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.spec import TaskPipeline

if TYPE_CHECKING:
    from bertstudio.core.engine import RunOptions


def score_kind(config: Any) -> str:
    """The pipeline's own rule for which function turns logits into scores."""
    problem = getattr(config, "problem_type", None)
    if problem == "regression":
        return "regression"
    if problem == "multi_label_classification" or config.num_labels == 1:
        return "multi-label"
    return "single-label"


def label_scores(config: Any, logits: Any) -> Any:
    """(rows, labels) float32 scores from (rows, labels) logits, as TextClassificationPipeline.postprocess
    makes them per row (sigmoid, softmax or the raw value by `score_kind`), for the engine's batches."""
    import numpy as np

    values = np.asarray(logits, dtype=np.float32)
    kind = score_kind(config)
    if kind == "multi-label":
        return 1.0 / (1.0 + np.exp(-values))
    if kind == "single-label":
        shifted = np.exp(values - values.max(axis=-1, keepdims=True))
        return shifted / shifted.sum(axis=-1, keepdims=True)
    return values


def _texts(rows: Sequence[tuple[str, ...]]) -> tuple[list[str], list[str | None] | None]:
    """Each row's text, and its pair (None where it has none; no pairs at all where no row has one)."""
    pairs = [row[1] if len(row) > 1 and row[1] else None for row in rows]
    return [row[0] for row in rows], pairs if any(pairs) else None


def encode(loaded: Any, rows: Sequence[tuple[str, ...]], control: TaskControl | None = None) -> Any:
    """Each row's text (and pair, where any row has one) tokenized once by the batch engine."""
    from bertstudio.core import engine

    return engine.encode_all(loaded, *_texts(rows), control)


def logits(loaded: Any, rows: Sequence[tuple[str, ...]], control: TaskControl | None = None,
           **options: Unpack[RunOptions]) -> tuple[Any, Any]:
    """(the rows `encode`d, their (rows, labels) float32 logits): tokenized while the batches run
    (engine.encode_run), for a whole file or a batch; `options` are engine.run's."""
    from bertstudio.core import engine

    return engine.encode_run_logits(loaded, *_texts(rows), control, **options)


def read(loaded: Any, logits: Any) -> Any:
    """Every label's score per row (see the module's docstring)."""
    config = loaded.model.config
    if not hasattr(logits, "softmax"):  # numpy, from the engine
        return label_scores(config, logits)
    raw = logits if logits.dtype.is_floating_point and logits.element_size() >= 4 else logits.float()
    kind = score_kind(config)
    if kind == "regression":
        return raw
    return raw.sigmoid() if kind == "multi-label" else raw.softmax(-1)


PIPELINE = TaskPipeline(encode=encode, read=read)
