"""What every trainable's validation metrics share: Trainer's `compute_metrics` type and the argmax
reduction. Each task's own metrics live with its trainable (core/tasks/<task>/train.py).

Logits are reduced to argmax ids in `preprocess_logits_for_metrics`, so evaluation never
keeps a vocabulary-sized logit tensor per token (pre-training) in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Metrics = Callable[[Any], dict[str, float]]


def argmax(logits: Any, _labels: Any) -> Any:
    if isinstance(logits, tuple):
        return tuple(part.argmax(-1) for part in logits)
    return logits.argmax(-1)
