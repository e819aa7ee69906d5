"""Views over one attention result, pure numpy: head means, rollout, hidden specials, A/B
quadrants and per-head statistics. The CLI, the tab and the tests share them; no Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from bertstudio.core.errors import InputError

if TYPE_CHECKING:
    from bertstudio.core.tasks.attention import AttentionResult

QUADRANTS = ("all", "A->A", "A->B", "B->A", "B->B")


# -- aggregates ------------------------------------------------------------------------------------
def mean_over_heads(attentions: np.ndarray) -> np.ndarray:
    """layers x T x T: the average head of each layer."""
    return attentions.mean(axis=1)


def rollout(attentions: np.ndarray, mean: np.ndarray | None = None) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema, 2020), cumulative up to each layer: layers x T x T.

    Each layer's head-averaged attention gets the residual connection added as the identity,
    rows are renormalised ((A + I) / 2 for stochastic rows), and layers are multiplied from the
    bottom: R_0 = Â_0, R_l = Â_l · R_{l-1}. Row q of R_l says how much of token q's layer-l
    representation flows from each input token.
    """
    mean = (mean_over_heads(attentions) if mean is None else mean).astype(np.float64)  # mean: reuse if known
    eye = np.eye(mean.shape[-1])
    out = np.empty_like(mean)
    current = eye
    for layer, matrix in enumerate(mean):
        hat = matrix + eye
        hat /= hat.sum(axis=-1, keepdims=True)
        current = hat @ current
        out[layer] = current
    return out.astype(np.float32)


# -- views: hide special tokens, quadrants -------------------------------------------------------
@dataclass(frozen=True)
class ViewOptions:
    """How a matrix is shown: a plain object the tab binds to and tests can build."""

    hide_special: bool = False
    renormalise: bool = True  # after hiding special tokens, rows sum to 1 again over what is left
    quadrant: str = "all"  # one of QUADRANTS (pairs only): query sentence -> key sentence

    def describe(self) -> str:
        parts = []
        if self.hide_special:
            parts.append("special tokens hidden, rows renormalised" if self.renormalise
                         else "special tokens hidden, not renormalised (rows sum to less than 1)")
        if self.quadrant != "all":
            parts.append(f"quadrant {self.quadrant} (queries in {self.quadrant[0]}, keys in {self.quadrant[-1]})")
        return "; ".join(parts)


@dataclass(frozen=True, eq=False)
class View:
    """Which query rows and key columns of the full matrix are shown."""

    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    cols: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    renormalise: bool = False

    def apply(self, matrices: np.ndarray) -> np.ndarray:
        """Slice (..., T, T) to (..., rows, cols), renormalising rows if asked."""
        out = matrices[..., self.rows[:, None], self.cols[None, :]]
        if self.renormalise:
            sums = out.sum(axis=-1, keepdims=True)
            out = np.divide(out, sums, out=np.zeros_like(out), where=sums > 0)
        return out


def segment_indices(result: AttentionResult, segment: str) -> np.ndarray:
    """Token positions of sentence 'A' or 'B'."""
    if result.b_start is None:
        raise InputError("Quadrants need a sentence pair: give a sentence B.")
    wanted = 0 if segment == "A" else 1
    return np.array([i for i, s in enumerate(result.segment_ids) if s == wanted], dtype=int)


def make_view(result: AttentionResult, options: ViewOptions) -> View:
    if options.quadrant not in QUADRANTS:
        raise InputError(f"Unknown quadrant {options.quadrant!r}; choose one of {', '.join(QUADRANTS)}.")
    every = np.arange(result.length)
    if options.quadrant == "all":
        rows, cols = every, every
    else:
        rows = segment_indices(result, options.quadrant[0])
        cols = segment_indices(result, options.quadrant[-1])
    if options.hide_special:
        keep = ~np.array(result.special, dtype=bool)
        rows, cols = rows[keep[rows]], cols[keep[cols]]
    return View(rows=rows, cols=cols, renormalise=options.hide_special and options.renormalise)


def quadrant(result: AttentionResult, matrix: np.ndarray, name: str) -> np.ndarray:
    """The A->A / A->B / B->A / B->B block of a (..., T, T) matrix (queries -> keys), not renormalised."""
    return make_view(result, ViewOptions(quadrant=name)).apply(matrix)


# -- statistics per head ---------------------------------------------------------------------------
STAT_COLUMNS = ("entropy", "cls", "sep", "previous", "next")
STAT_TITLES = {
    "entropy": "entropy (nats)",
    "cls": "to [CLS]",
    "sep": "to [SEP]",
    "previous": "to previous",
    "next": "to next",
}


@dataclass(frozen=True, eq=False)
class HeadStatistics:
    """One row per head, averaged over query tokens; arrays are layers x heads."""

    entropy: np.ndarray  # mean row entropy in nats (low: focused head, high: broad)
    cls: np.ndarray  # mean share of attention that goes to [CLS]
    sep: np.ndarray  # ... to any [SEP]
    previous: np.ndarray  # ... to the token just before the query
    next: np.ndarray  # ... to the token just after

    def rows(self) -> list[tuple[float, ...]]:
        """(layer, head, *statistics) per head, for the sortable table."""
        layers, heads = self.entropy.shape
        return [
            (layer, head, *(float(getattr(self, c)[layer, head]) for c in STAT_COLUMNS))
            for layer in range(layers) for head in range(heads)
        ]


def head_statistics(result: AttentionResult) -> HeadStatistics:
    """Per-head statistics in float32 with one temporary: 37M values at 512 tokens stay cheap."""
    att = result.attentions
    length = result.length
    # x * log(x) with zeros counting 0: log of max(x, tiny) in one buffer, then a fused multiply-sum
    logs = np.maximum(att, np.finfo(np.float32).tiny)
    np.log(logs, out=logs)
    layers, heads = att.shape[:2]
    flat_a, flat_l = att.reshape(layers * heads, length, length), logs.reshape(layers * heads, length, length)
    entropy = -np.einsum("nqk,nqk->n", flat_a, flat_l).reshape(layers, heads) / max(length, 1)
    del logs
    none = np.zeros(att.shape[:2], dtype=np.float32)
    cls = att[..., result.cls_index].mean(axis=-1) if result.cls_index is not None else none
    sep = att[..., list(result.sep_indices)].sum(axis=-1).mean(axis=-1) if result.sep_indices else none
    previous: np.ndarray  # a mean's dtype in numpy's stubs differs by release (float64 from 2.5 on)
    following: np.ndarray
    if length > 1:
        q = np.arange(1, length)
        previous = att[..., q, q - 1].mean(axis=-1)
        following = att[..., q - 1, q].mean(axis=-1)
    else:
        previous = following = none
    return HeadStatistics(*(np.asarray(a, dtype=np.float32) for a in (entropy, cls, sep, previous, following)))
