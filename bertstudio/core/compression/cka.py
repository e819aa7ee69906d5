"""Representation similarity of two models per layer pair: linear CKA (Kornblith et al. 2019).

Which student layer does what which teacher layer did? Each example is one vector per hidden state
(transformers' `hidden_states`: index 0 the embeddings, i the output of layer i): the mean of its
non-padding token vectors, so two models with different tokenizers or widths still compare row by
row. With X (n x d_A) and Y (n x d_B) the rows' vectors, columns centred,

    CKA(X, Y) = ||Y^T X||_F^2 / (||X^T X||_F ||Y^T Y||_F)

which is 1 for the same representation up to rotation and isotropic scale, 0 for unrelated ones.
The hidden states are gathered in batches through the batch engine (core/engine.py: sorted by
length, padded per batch, Cancel checked between batches); padding never enters a mean.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bertstudio.core import engine
from bertstudio.core.errors import InputError
from bertstudio.core.progress import TaskControl

if TYPE_CHECKING:
    from bertstudio.core.models import LoadedModel

# below 4 rows, centred representations span at most 2 dimensions and any two look alike (3 rows give
# ~0.99, 1 row 0/0): CKA is undefined there, reported as NaN (null in JSON) with a note, never a number
MIN_CKA_ROWS = 4
MAX_CKA_ROWS = 2000  # rows whose hidden states are compared: enough for a stable CKA, a few forwards on a CPU


@dataclass(frozen=True)
class LayerMeans:
    """Per row and hidden state, the mean of the row's real token vectors: (rows, layers + 1, hidden)."""

    vectors: np.ndarray
    seconds: float  # the forward passes (one per batch), for rows per second

    @property
    def rows(self) -> int:
        return int(self.vectors.shape[0])


def _mean_states(batch: engine.Batch, model: Any) -> Any:
    """The encoder's hidden states of the batch, each row's real tokens averaged: (rows, layers + 1, hidden)."""
    import torch

    out = model(**batch.inputs, output_hidden_states=True)
    states = getattr(out, "hidden_states", None)
    if not states:
        raise InputError("This model does not return its hidden states, so its layers cannot be compared.",
                         hint="Compare PyTorch models of the BERT family.")
    mask = batch.inputs["attention_mask"].to(torch.float32).unsqueeze(-1)  # (rows, T, 1)
    counts = mask.sum(dim=1).clamp(min=1)
    # float32 sums: half precision would round (or overflow) a sum over 512 tokens
    return torch.stack([(state.float() * mask).sum(dim=1) / counts for state in states], dim=1)


def layer_means(loaded: LoadedModel, texts: Sequence[str], pairs: Sequence[str | None] | None = None,
                control: TaskControl | None = None) -> LayerMeans:
    """Every row's mean token vector at every hidden state, in input order."""
    control = control or TaskControl()
    if not texts:
        raise InputError("There are no rows to compare the two models' layers on.")
    encoded = engine.encode_all(loaded, texts, pairs, control)  # before the clock: the speed is the forward's
    model = getattr(loaded.model, "base_model", loaded.model)  # the encoder: a head's input shape (choices) aside
    started = time.perf_counter()
    found = engine.run(loaded, encoded, lambda batch: _mean_states(batch, model), control,
                       verb="Read the layers of", unit="rows")
    return LayerMeans(np.stack(found).astype(np.float64), time.perf_counter() - started)


def _centred(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x - x.mean(axis=0, keepdims=True)


def linear_cka(x: np.ndarray, y: np.ndarray) -> float:
    """Linear CKA of two representations of the same n rows: (n, d_x) and (n, d_y); NaN (undefined) where
    either is constant or there are fewer than MIN_CKA_ROWS rows."""
    if x.shape[0] != y.shape[0]:
        raise ValueError("the two representations are not of the same rows")
    if x.shape[0] < MIN_CKA_ROWS:
        return math.nan
    x, y = _centred(x), _centred(y)
    norms = np.linalg.norm(x.T @ x) * np.linalg.norm(y.T @ y)
    return float(np.linalg.norm(y.T @ x) ** 2 / norms) if norms > 0 else math.nan


def cka_matrix(a: np.ndarray, b: np.ndarray, control: TaskControl | None = None) -> np.ndarray:
    """(layers_A + 1) x (layers_B + 1): entry [i][j] is linear CKA of A's hidden state i and B's j.

    `a` and `b` are `LayerMeans.vectors` of the same rows. The Gram norms are computed once per layer."""
    control = control or TaskControl()
    if a.shape[0] != b.shape[0]:
        raise ValueError("the two models' vectors are not of the same rows")
    if a.shape[0] < MIN_CKA_ROWS:
        return np.full((a.shape[1], b.shape[1]), np.nan)
    xs = [_centred(a[:, i]) for i in range(a.shape[1])]
    ys = [_centred(b[:, j]) for j in range(b.shape[1])]
    norm_x = [float(np.linalg.norm(x.T @ x)) for x in xs]
    norm_y = [float(np.linalg.norm(y.T @ y)) for y in ys]
    out = np.zeros((len(xs), len(ys)), dtype=np.float64)
    for i, x in enumerate(xs):
        control.check()
        for j, y in enumerate(ys):
            norms = norm_x[i] * norm_y[j]
            out[i, j] = float(np.linalg.norm(y.T @ x) ** 2 / norms) if norms > 0 else np.nan
    return out


def best_matches(matrix: np.ndarray) -> list[int]:
    """For each hidden state of B, the hidden state of A it is most similar to (a student's layer map);
    none where CKA is undefined (too few rows)."""
    if matrix.size == 0 or np.isnan(matrix).all():
        return []
    return [int(i) for i in np.argmax(np.nan_to_num(matrix, nan=-1.0), axis=0)]
