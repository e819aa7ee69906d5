"""The explained function F and its baselines, shared by the gradient methods (attribution.py)
and the perturbation methods (perturbation.py): F(input_ids, *extra) -> (batch,) probabilities of
the explained target, the input with its words replaced by the pad token, and how many perturbed
or interpolated inputs go through the model at once. `path_of` builds them once per explanation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from bertstudio.core.errors import InputError
from bertstudio.core.explain.methods import GRAD_X_INPUT, GRADIENT
from bertstudio.core.explain.targets import Prepared
from bertstudio.core.models import LoadedModel

ATTENTION_BUDGET = 2**20  # rows x tokens^2 per IG batch: 64 steps of 128 tokens, 4 of 512
TOKEN_BUDGET = 8192  # tokens per IG batch: short inputs still check for Cancel every few hundred steps


def baseline_ids(loaded: LoadedModel, prepared: Prepared) -> Any:
    """The input with every non-special token replaced by the pad token."""
    import torch

    pad = loaded.tokenizer.pad_token_id
    if pad is None:
        raise InputError("This tokenizer has no pad token, so the Integrated Gradients baseline cannot be built.",
                         hint="Use the gradient or gradient x input method.")
    ids = prepared.inputs["input_ids"]
    special = torch.tensor(prepared.special, device=ids.device).reshape(ids.shape)
    return torch.where(special, ids, torch.full_like(ids, pad))


def forward_of(loaded: LoadedModel, prepared: Prepared,
               embedded: bool = False) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """F(input_ids, *extra) -> (batch,) probabilities, and the extra inputs (mask, segments, positions).
    `embedded`: F takes the word embeddings (`inputs_embeds`) in place of the ids."""
    inputs = dict(prepared.inputs)
    ids = inputs.pop("input_ids")
    embeddings = getattr(getattr(loaded.model, loaded.model.base_model_prefix, None), "embeddings", None)
    padding_idx = getattr(embeddings, "padding_idx", None)
    if padding_idx is not None:  # RoBERTa: positions from the input's ids, not the baseline's pads
        real = ids.ne(padding_idx).long()
        inputs["position_ids"] = real.cumsum(-1) * real + padding_idx
    names = tuple(inputs)
    first = "inputs_embeds" if embedded else "input_ids"

    def forward(values: Any, *extra: Any) -> Any:
        return prepared.probability(loaded.model(**{first: values}, **dict(zip(names, extra, strict=True))))

    return forward, tuple(inputs[n] for n in names)


def zero_baseline(loaded: LoadedModel, prepared: Prepared) -> tuple[Any, Any]:
    """The input's word embeddings, and the same with every non-special token's set to zero."""
    import torch

    ids = prepared.inputs["input_ids"]
    with torch.no_grad():
        embedded = loaded.model.get_input_embeddings()(ids).detach()
    special = torch.tensor(prepared.special, device=ids.device).reshape(ids.shape).unsqueeze(-1)
    return embedded, embedded * special.to(embedded.dtype)


def steps_per_batch(prepared: Prepared, steps: int) -> int:
    ids = prepared.inputs["input_ids"]
    rows, width = max(1, ids.numel() // ids.shape[-1]), ids.shape[-1]
    return max(1, min(steps, ATTENTION_BUDGET // (rows * width * width), TOKEN_BUDGET // (rows * width)))


class Path(NamedTuple):
    """What a method reads, built once: F, its extra inputs, the input (the ids, or the word embeddings
    for the zero baseline) and the baseline (the gradient methods have none: the input itself)."""

    forward: Callable[..., Any]
    extra: tuple[Any, ...]
    inputs: Any
    start: Any


def path_of(loaded: LoadedModel, prepared: Prepared, method: str, baseline: str = "pad") -> Path:
    forward, extra = forward_of(loaded, prepared, embedded=baseline == "zero")
    if baseline == "zero":
        return Path(forward, extra, *zero_baseline(loaded, prepared))
    ids = prepared.inputs["input_ids"]
    return Path(forward, extra, ids, ids if method in (GRADIENT, GRAD_X_INPUT) else baseline_ids(loaded, prepared))
