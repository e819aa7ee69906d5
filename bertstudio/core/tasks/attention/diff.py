"""How model B's attention differs from model A's, head by head, on the same tokens (Compare).

Imported where it is used (attention_differences): numpy is not read before the window shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bertstudio.core.errors import InputError


@dataclass(frozen=True)
class AttentionDiff:
    """B minus A, per layer and head: arrays (layers, heads, T, T) and summaries (layers, heads)."""

    difference: np.ndarray  # b - a
    mean_abs: np.ndarray  # (layers, heads)
    max_abs: np.ndarray  # (layers, heads)

    def most_changed(self, count: int = 5) -> list[tuple[int, int, float]]:
        """(layer, head, mean |difference|) of the heads that changed most."""
        flat = np.argsort(self.mean_abs, axis=None)[::-1][:count]
        heads = self.mean_abs.shape[1]
        return [(int(i // heads), int(i % heads), float(self.mean_abs.flat[i])) for i in flat]

    def to_json(self) -> dict[str, object]:
        return {"mean_abs": self.mean_abs.tolist(), "max_abs": self.max_abs.tolist(),
                "most_changed": [{"layer": layer, "head": head, "mean_abs": value}
                                 for layer, head, value in self.most_changed()]}


def attention_difference(a: Any, b: Any) -> AttentionDiff:
    """Per-head difference of two attention stacks of the same tokens: (layers, heads, T, T) each.

    Both models must have read the same tokens (the same tokenizer) and have the same number of
    layers and heads; a batch dimension of 1 (layers, 1, heads, T, T) is dropped.
    """
    x, y = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    x = x[:, 0] if x.ndim == 5 and x.shape[1] == 1 else x
    y = y[:, 0] if y.ndim == 5 and y.shape[1] == 1 else y
    if x.ndim != 4 or y.ndim != 4:
        raise InputError("Attention must have the shape layers × heads × tokens × tokens.")
    if x.shape != y.shape:
        raise InputError(
            f"The two models' attention cannot be compared head by head: shapes {x.shape} and {y.shape} "
            "(layers × heads × tokens × tokens) differ.",
            hint="Compare models of the same size that share a tokenizer (e.g. a model and its fine-tuned copy).",
        )
    difference = y - x
    magnitude = np.abs(difference)
    return AttentionDiff(difference, magnitude.mean(axis=(2, 3)), magnitude.max(axis=(2, 3)))
