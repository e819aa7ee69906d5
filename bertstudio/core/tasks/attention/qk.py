"""Queries, keys and values of every head, read from each architecture's OWN projection modules.

Forward hooks on the query/key/value projections (a fused qkv projection is split in thirds) and,
for value-weighted norms, the weight of the attention output projection capture what the model
computes, during the one forward pass that also returns the attention weights. The modules come
from the model's anatomy (core/anatomy), not from copies of model code (BertViz's neuron view needs
its own model classes). ALBERT shares one layer's modules across all layers: its hooks fire once per
layer call, so captures are kept in call order, and call order is layer order for every architecture.
Where scores add position terms (DeBERTa, MPNet) or rotate q and k (ModernBERT, EuroBERT), q.k is not
the score the model attends with: the result's softmax error says how far it is.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bertstudio.core.anatomy.modules import anatomy

if TYPE_CHECKING:
    import numpy as np


@dataclass
class Captured:
    """What the hooks saw, one entry per attention call (= per layer), in call order."""

    query: list[Any] = field(default_factory=list)  # torch tensors (1, T, hidden), after the bias
    key: list[Any] = field(default_factory=list)
    value: list[Any] = field(default_factory=list)
    output_weight: list[Any] = field(default_factory=list)  # W_O of the block that made each value call


@contextmanager
def capture(model: Any, vectors: bool = True, values: bool = False) -> Iterator[Captured]:
    """Hook the projections for the duration of the block; `vectors`: queries, keys and values;
    `values`: values and W_O (for norms). The hooks are removed on exit, also on an error."""
    parts = anatomy(model)
    seen = Captured()
    handles: list[Any] = []

    def every_head(output: Any) -> Any:
        """Keys/values shared by groups of query heads (EuroBERT's grouped attention), one per head."""
        if parts.kv_heads == parts.heads or output.shape[-1] != parts.kv_heads * parts.head_size:
            return output.detach()
        grouped = output.detach().unflatten(-1, (parts.kv_heads, parts.head_size))
        return grouped.repeat_interleave(parts.heads // parts.kv_heads, dim=-2).flatten(-2)

    taken: set[int] = set()  # projections already read in this layer call

    def new_call(_module: Any, _inputs: Any) -> None:
        taken.clear()

    def first(target: list[Any]) -> bool:
        """Only a projection's first call in a layer call reads the tokens (DeBERTa then projects
        its relative position embeddings with the same query and key modules)."""
        if id(target) in taken:
            return False
        taken.add(id(target))
        return True

    def keep(targets: tuple[list[Any], ...], extra: Any = None, fused: bool = False) -> Any:
        """A hook adding a projection's output to `targets`; a fused qkv's thirds go to the query, key
        and value lists, the last ones alone when only the values are wanted."""
        def hook(_module: Any, _inputs: Any, output: Any) -> None:
            if not first(targets[-1]):
                return
            pieces = output.chunk(3, dim=-1)[-len(targets):] if fused else (output,)
            for target, piece in zip(targets, pieces, strict=True):
                target.append(every_head(piece))
            if extra is not None:
                seen.output_weight.append(extra)
        return hook

    try:
        for block in dict.fromkeys(layer.block for layer in parts.layers):
            handles.append(block.register_forward_pre_hook(new_call))
        for layer in parts.layers:
            weight = layer.output.weight if values else None
            if layer.qkv is not None:
                if vectors or values:
                    wanted = (seen.query, seen.key, seen.value) if vectors else (seen.value,)
                    handles.append(layer.qkv.register_forward_hook(keep(wanted, weight, fused=True)))
                continue
            if vectors:
                handles.append(layer.query.register_forward_hook(keep((seen.query,))))
                handles.append(layer.key.register_forward_hook(keep((seen.key,))))
            if vectors or values:
                handles.append(layer.value.register_forward_hook(keep((seen.value,), weight)))
        yield seen
    finally:
        for handle in handles:
            handle.remove()


def split_heads(per_layer: list[Any], heads: int) -> np.ndarray:
    """[(1, T, hidden)] * layers -> float32 numpy, layers x heads x T x head_dim."""
    import torch

    stacked = torch.stack([t[0] for t in per_layer]).to(torch.float32)  # layers x T x hidden
    layers, length, hidden = stacked.shape
    return stacked.view(layers, length, heads, hidden // heads).permute(0, 2, 1, 3).contiguous().cpu().numpy()


@dataclass(frozen=True, eq=False)
class HeadVectors:
    """Every head's queries, keys and values (after the projection and its bias, before scaling)."""

    query: np.ndarray  # float32, layers x heads x T x head_dim
    key: np.ndarray
    value: np.ndarray

    @property
    def head_dim(self) -> int:
        return int(self.query.shape[-1])

    def scores(self, layer: int, head: int, key_valid: np.ndarray | None = None) -> np.ndarray:
        """The scaled, masked pre-softmax scores q.k / sqrt(d) of one head (T x T)."""
        return scaled_scores(self.query[layer, head], self.key[layer, head], key_valid)


def scaled_scores(query: np.ndarray, key: np.ndarray, key_valid: np.ndarray | None = None) -> np.ndarray:
    """(..., T, d) queries and keys -> (..., T, T) q.k / sqrt(d); keys not valid get float32's
    lowest value, as the model's additive mask does (so they get no weight after the softmax)."""
    import numpy as np

    scores = (query @ np.swapaxes(key, -1, -2)) * np.float32(1.0 / math.sqrt(query.shape[-1]))
    if key_valid is not None:
        scores = np.where(np.asarray(key_valid, dtype=bool), scores, np.finfo(np.float32).min)
    return scores.astype(np.float32, copy=False)


def softmax(scores: np.ndarray) -> np.ndarray:
    import numpy as np

    shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def softmax_error(vectors: HeadVectors, attentions: np.ndarray, key_valid: np.ndarray | None = None) -> float:
    """Largest |softmax(scores) - attention weight| over every layer and head: ~1e-7 when the
    scores are what the model turned into its weights (a model with e.g. relative position
    terms would differ, and the neuron view says so)."""
    import numpy as np

    worst = 0.0
    for layer in range(vectors.query.shape[0]):
        probs = softmax(scaled_scores(vectors.query[layer], vectors.key[layer], key_valid))
        worst = max(worst, float(np.abs(probs - attentions[layer]).max()))
    return worst


def qk_json(vectors: HeadVectors, layer: int, head: int) -> dict[str, Any]:
    """The CLI's "qk": one head's vectors and its scaled pre-softmax scores."""
    return {"layer": layer, "head": head, "query": vectors.query[layer, head].tolist(),
            "key": vectors.key[layer, head].tolist(), "value": vectors.value[layer, head].tolist(),
            "scores": vectors.scores(layer, head).tolist()}


@dataclass(frozen=True, eq=False)
class QueryBreakdown:
    """What the neuron view draws for one query token of one head: each step of softmax(QK^T/sqrt(d)) V."""

    query: np.ndarray  # head_dim
    keys: np.ndarray  # T x head_dim
    products: np.ndarray  # T x head_dim: q * k element-wise (a row sums to q.k)
    scores: np.ndarray  # T: q.k / sqrt(d)
    weights: np.ndarray  # T: softmax(scores), the attention row
    values: np.ndarray  # T x head_dim

    def top_dimensions(self, key: int, count: int = 3) -> list[tuple[int, float]]:
        """The dimensions whose q*k product adds most to this key's score: (dimension, product)."""
        import numpy as np

        row = self.products[key]
        order = np.argsort(-row)[:count]
        return [(int(d), float(row[d])) for d in order]


def query_breakdown(vectors: HeadVectors, layer: int, head: int, query: int) -> QueryBreakdown:
    q = vectors.query[layer, head, query]
    keys = vectors.key[layer, head]
    products = keys * q[None, :]
    scores = products.sum(axis=-1) / math.sqrt(q.shape[-1])
    return QueryBreakdown(q, keys, products, scores.astype("float32"), softmax(scores).astype("float32"),
                          vectors.value[layer, head])
