"""What would flip a fill-mask prediction: the top candidate at the first mask, and the
vocabulary's probabilities there for a batch of edited texts."""

from __future__ import annotations

from typing import Any

from bertstudio.core.models import LoadedModel
from bertstudio.core.tasks.fill_mask import FillMaskResult
from bertstudio.core.whatif.tasks import Prediction, wide


def predicted(loaded: LoadedModel, result: FillMaskResult) -> Prediction:
    top = result.masks[0].candidates[0]
    return Prediction(top.token_id, top.token, top.score)


def probabilities(loaded: LoadedModel, inputs: Any, outputs: Any) -> Any:
    """The vocabulary's probabilities at each row's first mask (the candidate fill-mask ranks first)."""
    import torch

    ids = inputs["input_ids"]
    first = (ids == loaded.tokenizer.mask_token_id).int().argmax(-1)
    rows = torch.arange(ids.shape[0], device=ids.device)
    return wide(outputs.logits[rows, first]).softmax(-1)
