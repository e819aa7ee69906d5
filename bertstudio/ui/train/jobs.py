"""The Train tab's worker jobs: the plan preview (file columns, step plan, planned LR) and
the run itself, which also sends the exact LR plan once the engine has fixed the step count.
Everything here runs off the GUI thread."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any

from bertstudio.core.progress import Relay, TaskControl
from bertstudio.core.training.config import TrainConfig


@dataclass(frozen=True)
class Preview:
    """What the worker read for the plan: the file's columns (classification) and the step plan."""

    path: str
    header: list[str] | None
    detected: Any
    plan: Any  # None: the labels hold `|` but Multi-label is off (the tab proposes it)
    lrs: Any
    distribution: Any = None  # a text classifier's label counts (core/tasks/classification/imbalance.py)


def preview_job(config: TrainConfig, want_columns: bool, control: TaskControl) -> Preview:
    """Columns, step plan and planned learning rates, computed off the GUI thread."""
    from bertstudio.core.lazy_imports import import_transformers
    from bertstudio.core.training.data import file_columns
    from bertstudio.core.training.engine import plan
    from bertstudio.core.training.schedules import planned_lr

    import_transformers()  # waits for a start-up import in another thread instead of racing it

    header = detected = None
    if want_columns:
        header, detected = file_columns(config.train_file)
        if config.columns is None:
            config = replace(config, columns=detected)
    control.check()
    distribution = _label_distribution(config)
    if distribution is not None and distribution.multi_label and not config.multi_label:
        return Preview(config.train_file, header, detected, None, None, distribution)
    steps = plan(config)
    control.check()
    lrs = planned_lr(config.scheduler, config.learning_rate, steps.total_steps, steps.warmup_steps)
    return Preview(config.train_file, header, detected, steps, lrs, distribution)


def _label_distribution(config: TrainConfig) -> Any:
    """The training file's label counts, for a task whose loss class weights change (else None)."""
    from bertstudio.core.tasks.classification.imbalance import label_distribution
    from bertstudio.core.training.trainable import TRAINABLE

    if not getattr(TRAINABLE.get(config.task), "weighted_loss", False):
        return None
    return label_distribution(config.train_file, config.columns, True if config.multi_label else None)


@dataclass(frozen=True)
class PlannedRates:
    """The run's exact LR plan, computed in the worker once the engine has fixed the step count."""

    values: Any


@dataclass(frozen=True)
class ResumedHistory:
    """What a resumed run had logged before its checkpoint (read in the worker), for the plots."""

    history: Any


def resumed_history(config: TrainConfig) -> Any:
    """The log history of the checkpoint this run resumes from: by the plan event the engine has
    chosen it and removed newer incomplete ones, so it is the newest left (bounded, validated read)."""
    from bertstudio.core.training.log_history import newest_checkpoint, read_history
    from bertstudio.core.training.saving import checkpoints_dir

    checkpoint = newest_checkpoint(checkpoints_dir(config.output_dir))
    return read_history(checkpoint) if checkpoint is not None else None


class _PlanRelay(Relay):
    """Passes everything through to the runner's control, adding the exact LR plan once the
    engine's plan event fixes the step count, and after a resume the steps logged before it
    (both computed here, in the worker)."""

    def __init__(self, outer: TaskControl, config: TrainConfig) -> None:
        super().__init__(outer)
        self.config = config

    def report(self, message: str, fraction: float | None = None, payload: object = None) -> None:
        from bertstudio.core.training.events import TrainingEvent
        from bertstudio.core.training.schedules import planned_lr

        self.outer.report(message, fraction, payload)
        if isinstance(payload, TrainingEvent) and payload.kind == "plan":
            warmup = int(payload.metrics.get("warmup_steps", 0))
            lrs = planned_lr(self.config.scheduler, self.config.learning_rate, payload.max_steps, warmup)
            self.outer.report("planned learning rate", None, PlannedRates(lrs))
            history = resumed_history(self.config) if self.config.resume else None
            if history:
                self.outer.report("steps before the resume", None, ResumedHistory(history))


def train_job(config: TrainConfig, stop_event: threading.Event, control: TaskControl) -> Any:
    from bertstudio.core.training.engine import train

    return train(config, _PlanRelay(control, config), stop_event=stop_event)
