"""The planned learning-rate curve, computed by transformers' own `get_scheduler`.

The tab draws it before Start so the user sees the warmup and decay they asked for; the
engine's logged rates must land on it (a test checks every step).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

SCHEDULERS: tuple[str, ...] = (
    "linear", "cosine", "cosine_with_restarts", "polynomial", "constant", "constant_with_warmup",
)


def warmup_steps_for(total_steps: int, warmup_steps: int = 0, warmup_ratio: float = 0.0) -> int:
    """Warmup in steps: explicit steps win over a ratio of the total."""
    if warmup_steps and warmup_steps > 0:
        return min(int(warmup_steps), total_steps)
    if warmup_ratio and warmup_ratio > 0:
        return min(total_steps, math.ceil(total_steps * float(warmup_ratio)))
    return 0


def planned_lr(name: str, learning_rate: float, total_steps: int, warmup_steps: int) -> np.ndarray:
    """Learning rate used at each optimiser step 1..total_steps (index 0 is step 1)."""
    import torch
    from transformers import get_scheduler

    if name not in SCHEDULERS:
        raise ValueError(f"unknown scheduler {name!r}; choose one of {', '.join(SCHEDULERS)}")
    total_steps = max(1, int(total_steps))
    parameter = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([parameter], lr=learning_rate)
    scheduler: Any = get_scheduler(name, optimizer, num_warmup_steps=warmup_steps, num_training_steps=total_steps)
    lambdas = getattr(scheduler, "lr_lambdas", None)
    if lambdas:  # every scheduler above is a LambdaLR: evaluate its lambda, no stepping needed
        return np.array([learning_rate * lambdas[0](step) for step in range(total_steps)], dtype=np.float64)
    values = []
    for _ in range(total_steps):
        values.append(scheduler.get_last_lr()[0])
        optimizer.step()
        scheduler.step()
    return np.asarray(values, dtype=np.float64)


def decay_split(model: Any) -> tuple[int, int]:
    """(tensors with weight decay, all trainable tensors), decided exactly as Trainer decides."""
    from transformers import Trainer

    decay = set(Trainer.get_decay_parameter_names(None, model))  # type: ignore[arg-type]  # uses no state
    trainable = [name for name, p in model.named_parameters() if p.requires_grad]
    return sum(name in decay for name in trainable), len(trainable)
