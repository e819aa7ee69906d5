"""The learning-rate range test (Smith 2015; fastai's `lr_find`): train for a few dozen steps while
the learning rate grows exponentially from 1e-7 to 1, stop once the loss explodes, and suggest the
rate where the smoothed loss falls fastest. Nothing is saved: the model trained here is thrown away.

The loop is plain torch (AdamW, the task's own encoding and collator): Trainer's scheduler cannot
sweep, and a sweep needs no checkpoints, evaluation or saving."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from bertstudio.core import devices
from bertstudio.core.errors import InputError
from bertstudio.core.progress import TaskControl
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.trainable import TRAINABLE

START_LR, END_LR, STEPS = 1e-7, 1.0, 60
SMOOTHING = 0.9  # EMA weight of the past (debiased)
EXPLODES = 4.0  # the sweep stops once the smoothed loss is this many times its lowest
SKIP_START = 3  # the first few smoothed points still carry the EMA's start-up bias


@dataclass(frozen=True)
class LrPoint:
    """One step of the sweep: the progress payload the plot draws as it comes."""

    step: int
    steps: int
    learning_rate: float
    loss: float
    smoothed: float


@dataclass(frozen=True)
class LrRange:
    learning_rates: tuple[float, ...]
    losses: tuple[float, ...]
    smoothed: tuple[float, ...]
    suggested: float | None  # None when the loss never fell
    stopped_because: str

    def to_json(self) -> dict[str, Any]:
        return {"event": "find_lr", "learning_rates": list(self.learning_rates), "losses": list(self.losses),
                "smoothed": list(self.smoothed), "suggested_learning_rate": self.suggested,
                "stopped_because": self.stopped_because}


def sweep(steps: int = STEPS, start: float = START_LR, end: float = END_LR) -> np.ndarray:
    """Learning rates growing by one constant factor per step."""
    return np.geomspace(start, end, steps)


def smooth(losses: list[float], weight: float = SMOOTHING) -> list[float]:
    """Debiased exponential moving average (as fastai's recorder smooths the range test)."""
    out, average = [], 0.0
    for n, loss in enumerate(losses, start=1):
        average = weight * average + (1 - weight) * loss
        out.append(average / (1 - weight**n))
    return out


def suggest(learning_rates: list[float], smoothed: list[float]) -> float | None:
    """The rate of steepest descent: the most negative slope of smoothed loss over log(rate), up to the
    lowest loss (past it the loss only climbs)."""
    lowest = int(np.argmin(smoothed)) if smoothed else 0
    if lowest - SKIP_START < 2:
        return None
    lrs, losses = np.log(learning_rates[SKIP_START:lowest + 1]), np.asarray(smoothed[SKIP_START:lowest + 1])
    slope = np.gradient(losses, lrs)[:-1]  # not the lowest point itself: its one-sided slope is no descent
    if slope.min() >= 0:
        return None
    return float(learning_rates[SKIP_START + int(slope.argmin())])


def _load(config: TrainConfig, labels: list[str], control: TaskControl) -> tuple[Any, Any, bool]:
    """The task's model and tokenizer, as a training run loads them."""
    import transformers
    from transformers import AutoTokenizer

    from bertstudio.core.model_folder import load_pretrained
    from bertstudio.core.models import quiet_transformers, resolve_source

    quiet_transformers()
    transformers.set_seed(config.seed)
    folder = resolve_source(config.model, control)
    control.report(f"Loading {config.model}…")
    tokenizer = load_pretrained(AutoTokenizer, folder, f"The tokenizer in '{folder}' cannot be loaded.")
    model, nsp = TRAINABLE[config.task].load(folder, config, labels, tokenizer)
    return model, tokenizer, nsp


def find_lr(config: TrainConfig, control: TaskControl | None = None, steps: int = STEPS) -> LrRange:
    """Sweep the learning rate on the training file with the run's model, batch size and length."""
    import torch

    control = control or TaskControl()
    config.validate()
    if not config.model:
        raise InputError("The learning-rate finder needs a base model.", hint="Choose one (not from scratch).")
    if not 5 <= steps <= 1000:
        raise InputError(f"The learning-rate sweep takes 5 to 1,000 steps, not {steps}.")
    device = devices.normalise_device(config.device)  # an unknown device refused before anything loads
    task = TRAINABLE[config.task]
    control.report("Reading the data…")
    data = task.read(config, nsp=task.reads_pairs(config, control))
    model, tokenizer, nsp = _load(config, data.labels, control)
    rows, _lengths = task.encode(tokenizer, data.train, data.labels, config.max_length, nsp, control)
    batches = _batches(rows, task.collator(tokenizer), config, steps)
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=START_LR, weight_decay=config.weight_decay)
    lrs, losses, smoothed, why = [], [], [], "reached the end of the sweep"
    for step, (lr, batch) in enumerate(zip(sweep(steps), batches, strict=False)):
        control.check()
        loss = _step(model, optimizer, float(lr), batch, device)
        if not math.isfinite(loss):
            why = f"the loss was not a finite number at learning rate {lr:.3g}"
            break
        lrs.append(float(lr))
        losses.append(loss)
        smoothed = smooth(losses)
        control.report(f"Learning rate {lr:.3g}: loss {loss:.4f}", (step + 1) / steps,
                       payload=LrPoint(step, steps, float(lr), loss, smoothed[-1]))
        if step > SKIP_START and smoothed[-1] > EXPLODES * min(smoothed):
            why = f"the loss exploded at learning rate {lr:.3g}"
            break
    return LrRange(tuple(lrs), tuple(losses), tuple(smoothed), suggest(lrs, smoothed), why)


def _batches(rows: list[dict[str, Any]], collator: Any, config: TrainConfig, steps: int) -> list[Any]:
    """`steps` shuffled batches (seeded), going round the data again when it is short."""
    order = np.random.default_rng(config.seed).permutation(np.resize(np.arange(len(rows)),
                                                                       steps * config.batch_size))
    return [collator([rows[i] for i in order[s * config.batch_size:(s + 1) * config.batch_size]])
            for s in range(steps)]


def _step(model: Any, optimizer: Any, lr: float, batch: Any, device: str) -> float:
    for group in optimizer.param_groups:
        group["lr"] = lr
    outputs = model(**{key: value.to(device) for key, value in batch.items()})
    if getattr(outputs, "loss", None) is None:
        raise InputError("This task's model gives no loss of its own, so its learning rate cannot be swept.")
    outputs.loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return float(outputs.loss.detach())
