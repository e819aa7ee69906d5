"""What a counterfactual search asks a task: the Prediction it must change, and the probabilities
of a batch of edited inputs, scored here on the batch engine.

Each spec's `CounterfactualAdapter` names its two functions (core/tasks/<task>/whatif.py):
`predicted` reads the prediction from the task's own result (what the search must flip and what
verification reads); `probabilities` turns a batch's model outputs into (batch, classes)
probabilities with the same function the task uses (softmax, or sigmoid for a multi-label head).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl

if TYPE_CHECKING:
    from bertstudio.core.tasks.spec import CounterfactualAdapter


@dataclass(frozen=True)
class Prediction:
    """A task's prediction: its class index (a label id, a choice, a token id), name and score."""

    index: int
    label: str
    score: float

    def to_json(self) -> dict[str, object]:
        return {"label": self.label, "score": self.score}


def score(loaded: LoadedModel, adapter: CounterfactualAdapter, batch: list[tuple[str, ...]], index: int,
          control: TaskControl) -> tuple[list[int], list[float]]:
    """Per edited input: the predicted class and the probability of class `index` (the original
    prediction), through the batch engine (sorted, padded per batch, the fast attention kernel).
    A prompt with endings: the task's own (inputs x choices) logits (`choice_logits`), read by the task's
    probabilities."""
    from types import SimpleNamespace

    import torch

    from bertstudio.core import engine

    model = loaded.model
    if adapter.choice_logits is not None:
        grouped = SimpleNamespace(logits=torch.from_numpy(adapter.choice_logits(loaded, batch, control)))
        probabilities = adapter.probabilities(loaded, {}, grouped).float()
        return probabilities.argmax(-1).tolist(), probabilities[:, index].tolist()
    pairs = [t[1] for t in batch] if len(batch[0]) > 1 else None
    encoded = engine.encode_all(loaded, [t[0] for t in batch], pairs, control)

    def forward(rows: engine.Batch) -> Any:
        probabilities = adapter.probabilities(loaded, rows.inputs, model(**rows.inputs)).float()
        return probabilities.argmax(-1), probabilities[:, index]

    found = engine.run(loaded, encoded, forward, control, progress=False)
    return [int(label) for label, _ in found], [float(p) for _, p in found]


def wide(values: Any) -> Any:
    """Half precision widened to float32 for the softmax (the probabilities a search compares)."""
    return values if values.dtype.is_floating_point and values.element_size() >= 4 else values.float()
