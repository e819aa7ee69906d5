"""A loaded encoder's parts, found through the family table: the one way code reaches inside a model.

`anatomy(model)` answers where the layers (shared or not), each layer's attention
(q, k, v or a fused qkv, the output projection whose input is the heads' values), the feed-forward
block, the final norm and the masked-LM head are, and how many heads of what size there are.
ALBERT calls one shared layer once per layer: `calls` counts the calls, `layers` the modules, and a
hook on the `encoder` restarts a call counter so each call is the next layer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bertstudio.core.anatomy.families import Family, family_of, known_names
from bertstudio.core.errors import InputError


@dataclass(frozen=True, eq=False)
class Layer:
    """One layer module and its attention parts (None where the family fuses or lacks one)."""

    block: Any
    output: Any  # the attention output projection: its input holds every head's values side by side
    query: Any = None
    key: Any = None
    value: Any = None
    qkv: Any = None  # a fused projection: queries, keys and values in thirds of its output
    feed_forward: tuple[Any, ...] = ()


@dataclass(frozen=True, eq=False)
class Anatomy:
    """Where a loaded model's parts are; `calls` layer calls run per forward pass."""

    family: Family
    base: Any  # the bare encoder (BertModel, ModernBertModel...)
    encoder: Any  # its forward runs every layer call once
    layers: tuple[Layer, ...]  # distinct layer modules, in call order (ALBERT: the shared one(s))
    calls: int
    heads: int
    kv_heads: int  # key/value heads (fewer than `heads` where queries share them, as in EuroBERT)
    head_size: int
    final_norm: Any = None

    @property
    def shared(self) -> bool:
        """Whether a layer module runs more than once per pass (ALBERT)."""
        return len(self.layers) != self.calls


def walk(root: Any, path: str) -> list[Any]:
    """The modules at a dotted `path` under `root` (`*`: every child, in order); [] if one is missing."""
    found = [root]
    for part in path.split(".") if path else ():
        if part == "*":
            found = [child for module in found for child in module.children()]
        else:
            found = [getattr(module, part) for module in found if hasattr(module, part)]
    return found


def _one(root: Any, path: str) -> Any:
    found = walk(root, path) if path else []
    return found[0] if found else None


def bare_encoder(model: Any) -> Any:
    """The encoder under a task model's head (the model itself when it is bare)."""
    prefix = getattr(model, "base_model_prefix", "")
    return getattr(model, prefix) if prefix and hasattr(model, prefix) else model


def family_for(model: Any, doing: str = "This") -> Family:
    """The model's family, or an InputError that says which families are known."""
    family = family_of(model.config)
    if family is None:
        kind = getattr(model.config, "model_type", "") or type(model).__name__
        raise InputError(f"{doing} cannot reach inside a {kind} model: its architecture is not in BERT Studio's "
                         "table of model anatomies.", hint=f"Known architectures: {known_names()}.")
    return family


def _count(config: Any, *names: str) -> int | None:
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def anatomy(model: Any) -> Anatomy:
    """The parts of `model` (any head) through its family's table."""
    family = family_for(model)
    config, base = model.config, bare_encoder(model)
    blocks = walk(base, family.layers)
    if not blocks:
        raise InputError(f"No layers found in {type(model).__name__} at '{family.layers}'.",
                         hint="This transformers version names the model's modules differently.")
    layers = tuple(Layer(block, _one(block, family.output), _one(block, family.query), _one(block, family.key),
                         _one(block, family.value), _one(block, family.qkv),
                         tuple(m for name in family.feed_forward for m in walk(block, name)))
                   for block in blocks)
    heads = _count(config, "num_attention_heads", "n_heads") or 1
    hidden = _count(config, "hidden_size", "dim") or 0
    head_size = _count(config, "head_dim") or hidden // heads
    calls = _count(config, "num_hidden_layers", "n_layers") or len(blocks)
    if len(blocks) != calls:  # ALBERT: each of the L calls runs every inner layer of its group
        calls *= _count(config, "inner_group_num") or 1
    encoder = _one(base, family.encoder) if family.encoder else base
    return Anatomy(family, base, encoder, layers, calls, heads, _count(config, "num_key_value_heads") or heads,
                   head_size, _one(base, family.final_norm))


def masked_lm_head(model: Any) -> Callable[[Any], Any] | None:
    """hidden states -> vocabulary logits through the model's own masked-LM head; None without one."""
    family = family_for(model)
    for recipe in family.masked_lm:  # the first recipe whose every module the model has
        steps = [(_one(model, name.split("+")[0]), name.endswith("+embeddings")) for name in recipe]
        if any(module is None for module, _ in steps):
            continue
        return _chain(steps, model.get_input_embeddings())
    return None


def _chain(steps: list[tuple[Any, bool]], embeddings: Any) -> Callable[[Any], Any]:
    def head(hidden: Any) -> Any:
        for module, with_embeddings in steps:
            hidden = module(hidden, embeddings) if with_embeddings else module(hidden)
        return hidden

    return head


def attention_refusal(model: Any) -> str:
    """Why this model's attention weights cannot be read ("" when they can)."""
    family = family_of(model.config)
    if family is not None and family.attention_weights == "sparse" \
            and getattr(model.config, "attention_type", "") == "block_sparse":
        return (f"{family.name}'s block-sparse attention gives no attention weights in transformers (for short texts "
                "it switches to full attention inside the forward pass, after the weights would be recorded)")
    return ""


def square_attention(model: Any, weights: Any, length: int) -> Any:
    """One layer's weights (heads x T x T) for a row of `length` tokens: Longformer's banded weights
    (heads x T x window + 1, the token itself in the middle) placed on their diagonals, zero
    outside the window, which is what the model computes."""
    import torch

    family = family_of(model.config)
    if family is None or family.attention_weights != "banded" or weights.shape[-1] == weights.shape[-2] == length:
        return weights[..., :length, :length]
    band = weights[..., :length, :]
    half = (band.shape[-1] - 1) // 2
    square = torch.zeros(*band.shape[:-1], length, dtype=band.dtype, device=band.device)
    for offset in range(-half, half + 1):
        rows = torch.arange(max(0, -offset), min(length, length - offset), device=band.device)
        square[..., rows, rows + offset] = band[..., rows, offset + half]
    return square
