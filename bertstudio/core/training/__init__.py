"""Fine-tuning and pre-training on transformers' Trainer (no Qt): see engine.py."""

from bertstudio.core.training.data import Columns, LengthSummary
from bertstudio.core.training.engine import (
    OPEN_IN,
    TASKS,
    Plan,
    TrainConfig,
    TrainingEvent,
    TrainResult,
    plan,
    train,
)
from bertstudio.core.training.pretraining import ScratchConfig
from bertstudio.core.training.schedules import SCHEDULERS, planned_lr

__all__ = [
    "OPEN_IN", "SCHEDULERS", "TASKS", "Columns", "LengthSummary", "Plan", "ScratchConfig", "TrainConfig",
    "TrainResult", "TrainingEvent", "plan", "planned_lr", "train",
]
