"""Per task: the prediction a counterfactual must change, and the probabilities of edited inputs.

Each spec's `CounterfactualAdapter` names its two functions here. `predicted` reads the
prediction from the task's own result (what the search must flip and what verification reads);
`probabilities` turns a batch's model outputs into (batch, classes) probabilities with the same
function the task uses (softmax, or sigmoid for a multi-label classifier).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bertstudio.core.errors import InputError
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
    A prompt with endings (batch x choices x tokens) keeps generators.score's own shape."""
    if adapter.choices:
        from bertstudio.core.whatif import generators

        return generators.score(loaded, adapter, batch, index)
    from bertstudio.core import engine

    pairs = [t[1] for t in batch] if len(batch[0]) > 1 else None
    encoded = engine.encode_all(loaded, [t[0] for t in batch], pairs, control)
    model = loaded.model

    def forward(rows: engine.Batch) -> Any:
        probabilities = adapter.probabilities(loaded, rows.inputs, model(**rows.inputs)).float()
        return probabilities.argmax(-1), probabilities[:, index]

    found = engine.run(loaded, encoded, forward, control, progress=False)
    return [int(label) for label, _ in found], [float(p) for _, p in found]


def _wide(values: Any) -> Any:
    return values if values.dtype.is_floating_point and values.element_size() >= 4 else values.float()


def classification_predicted(loaded: LoadedModel, result: Any) -> Prediction:
    if result.batch or len(result.rows) != 1:
        raise InputError("A counterfactual is searched for one text (or pair), not a batch of rows.")
    if result.kind == "regression":
        raise InputError("A regression model predicts a value, not a label: there is no label to flip.")
    top = result.first.top
    by_name = {str(v): int(k) for k, v in (loaded.model.config.id2label or {}).items()}
    return Prediction(by_name.get(top.label, 0), top.label, top.score)


def classification_probabilities(loaded: LoadedModel, inputs: Any, outputs: Any) -> Any:
    from bertstudio.core.tasks.classification import score_kind

    logits = _wide(outputs.logits)
    return logits.sigmoid() if score_kind(loaded.model.config) == "multi-label" else logits.softmax(-1)


def nsp_predicted(loaded: LoadedModel, result: Any) -> Prediction:
    from bertstudio.core.tasks.nsp import IS_NEXT, IS_NEXT_LABEL, NOT_NEXT, NOT_NEXT_LABEL

    if not hasattr(result, "is_next"):
        raise InputError("A counterfactual is searched for one pair: sentence A and one sentence B.")
    if result.is_next >= result.not_next:
        return Prediction(IS_NEXT, IS_NEXT_LABEL, result.is_next)
    return Prediction(NOT_NEXT, NOT_NEXT_LABEL, result.not_next)


def softmax_probabilities(loaded: LoadedModel, inputs: Any, outputs: Any) -> Any:
    """NSP's two labels, multiple choice's endings: a softmax over the logits."""
    return _wide(outputs.logits).softmax(-1)


def choice_predicted(loaded: LoadedModel, result: Any) -> Prediction:
    best = result.best
    return Prediction(best.index, best.choice, best.score)


def fill_mask_predicted(loaded: LoadedModel, result: Any) -> Prediction:
    top = result.masks[0].candidates[0]
    return Prediction(top.token_id, top.token, top.score)


def fill_mask_probabilities(loaded: LoadedModel, inputs: Any, outputs: Any) -> Any:
    """The vocabulary's probabilities at each row's first mask (the candidate fill-mask ranks first)."""
    import torch

    ids = inputs["input_ids"]
    first = (ids == loaded.tokenizer.mask_token_id).int().argmax(-1)
    rows = torch.arange(ids.shape[0], device=ids.device)
    return _wide(outputs.logits[rows, first]).softmax(-1)
