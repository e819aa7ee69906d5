"""Value-weighted attention (Kobayashi et al. 2020, "Attention is not only a weight").

Head h of a layer adds alpha_ij f_h(x_j) to token i, with f_h(x_j) = v_j W_O^h: the head's value
vector (after the value projection and its bias) times that head's slice of the attention
output projection's weight (its bias is no token's). The size of what token j sends is
||alpha_ij f_h(x_j)|| = alpha_ij ||f_h(x_j)||, and summed over heads ||sum_h alpha_ij^h f_h(x_j)||.

Per-head norms need only ||f_h(x_j)||^2 = v_j^h (W_h^T W_h) v_j^h (W_h: the head's slice of W_O),
a heads x d x d product per layer, ~8x cheaper than forming f_h(x_j). The summed norm needs the
Gram matrix G_j[h, g] = f_h(x_j) . f_g(x_j) (T x heads x heads): sqrt(alpha_ij^T G_j alpha_ij).
Both from the values the forward hooks captured; no T x T x hidden array is ever built, and the
model runs once. Called inside that forward's `engine.exclusive` (inference mode: W_O needs no gradient).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


def value_gram(values: list[Any], output_weights: list[Any], heads: int) -> np.ndarray:
    """Per layer and key token, the Gram matrix of the heads' transformed values f_h(x_j).

    `values`: [(1, T, hidden)] per layer (the value projection's outputs); `output_weights`: the
    attention output projection's weight of each layer (out x hidden, as torch.nn.Linear keeps
    it). Returns float32 numpy, layers x T x heads x heads."""
    import torch

    grams = []
    for value, weight in zip(values, output_weights, strict=True):
        v = value[0].to(torch.float32)
        length, hidden = v.shape
        w = weight.to(torch.float32).view(weight.shape[0], heads, hidden // heads)  # out x heads x d
        f = torch.einsum("thd,ohd->tho", v.view(length, heads, hidden // heads), w)  # T x heads x out
        grams.append(f @ f.transpose(1, 2))
    return torch.stack(grams).cpu().numpy()


def value_norms(values: list[Any], output_weights: list[Any], heads: int) -> np.ndarray:
    """||f_h(x_j)||: layers x heads x T (float32 numpy), without forming f_h(x_j).

    All layers in one batched product (a dozen small ops, not a dozen per layer: on a loaded
    machine each torch op pays for waking its threads)."""
    import torch

    v = torch.stack([value[0] for value in values]).to(torch.float32)  # layers x T x hidden
    layers, length, hidden = v.shape
    unique = {id(w): w for w in output_weights}  # ALBERT: one W_O for every layer
    index = list(unique).index
    w = torch.stack([unique[key] for key in unique]).to(torch.float32)  # n x out x hidden
    w = w.view(w.shape[0], w.shape[1], heads, hidden // heads)
    products = torch.einsum("nohd,nohe->nhde", w, w)  # W_h^T W_h: n x heads x d x d
    products = products[[index(id(weight)) for weight in output_weights]]  # layers x heads x d x d
    per_head = v.view(layers, length, heads, hidden // heads).transpose(1, 2)  # layers x heads x T x d
    squared = ((per_head @ products) * per_head).sum(-1)  # layers x heads x T
    return squared.clamp_min(0.0).sqrt().cpu().numpy()


def transformed_norms(gram: np.ndarray) -> np.ndarray:
    """||f_h(x_j)||: layers x heads x T, from the Gram matrices' diagonals."""
    import numpy as np

    diagonal = np.diagonal(gram, axis1=-2, axis2=-1)  # layers x T x heads
    return np.sqrt(np.maximum(diagonal, 0.0)).transpose(0, 2, 1).astype(np.float32)


def head_norms(attentions: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """||alpha_ij f_h(x_j)|| per head: layers x heads x T x T (alpha >= 0, so alpha times the norm).

    `norms`: ||f_h(x_j)|| (layers x heads x T), from `value_norms` or `transformed_norms(gram)`."""
    import numpy as np

    out = np.empty_like(attentions, dtype=np.float32)
    np.multiply(attentions, norms[:, :, None, :], out=out)
    return out


def summed_norms(attentions: np.ndarray, gram: np.ndarray) -> np.ndarray:
    """||sum_h alpha_ij^h f_h(x_j)||: layers x T x T, sqrt(alpha_ij^T G_j alpha_ij)."""
    import numpy as np

    layers, _heads, length, _ = attentions.shape
    out = np.empty((layers, length, length), dtype=np.float32)
    for layer in range(layers):
        alpha = attentions[layer].transpose(2, 1, 0)  # key j x query i x head
        mixed = alpha @ gram[layer]  # j x i x heads: one batched matmul over keys
        squared = np.einsum("jih,jih->ij", mixed, alpha)
        out[layer] = np.sqrt(np.maximum(squared, 0.0))
    return out
