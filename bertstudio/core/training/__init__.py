"""Fine-tuning and pre-training on transformers' Trainer (no Qt): see engine.py."""

from bertstudio.core.training.config import TASKS, TrainConfig
from bertstudio.core.training.data import Columns, LengthSummary
from bertstudio.core.training.engine import plan, train
from bertstudio.core.training.events import Plan, TrainingEvent, TrainResult
from bertstudio.core.training.pretraining import ScratchConfig
from bertstudio.core.training.saving import MARKER, checkpoints_dir
from bertstudio.core.training.schedules import SCHEDULERS, planned_lr
from bertstudio.core.training.trainable import TRAINABLE

__all__ = [
    "MARKER", "SCHEDULERS", "TASKS", "TRAINABLE", "Columns", "LengthSummary", "Plan", "ScratchConfig",
    "TrainConfig", "TrainResult", "TrainingEvent", "checkpoints_dir", "plan", "planned_lr", "train",
]
