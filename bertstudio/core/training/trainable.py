"""The registry of trainable tasks: `TRAINABLE[config.task]` is what the engine, the `train` CLI and
the Train tab ask; none of them branches on the task itself.

Each task package declares its trainables on its spec (`TaskSpec.trainables`, defined in
core/tasks/<task>/train.py on top of base.TrainableTask); this module only collects them, in their
`order`. Where a result opens is not a list of app task keys either: a trainable names the
transformers heads its saved model carries (`heads`), and the result opens in every task spec whose
model class is one of them (a new task spec with such a head is offered without an edit here).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.model_folder import load_pretrained
from bertstudio.core.tasks.spec import all_specs
from bertstudio.core.training.base import Data, TrainableTask

__all__ = ["TRAINABLE", "Data", "TrainableTask", "pretraining_class"]  # Data: engine.py imports it from here


def pretraining_class(folder: Path) -> tuple[Any, bool]:
    """BERT-style pre-training (MLM + NSP) where the architecture has it, else masked LM only.

    Pre-training's own question, kept here because training/engine.py (another module's owner) imports
    it from this module to probe a base model before reading the data (test_task_packages says so)."""
    import transformers
    from transformers import AutoConfig

    config = load_pretrained(AutoConfig, folder, f"The configuration in '{folder}' cannot be loaded.")
    cls = transformers.MODEL_FOR_PRETRAINING_MAPPING.get(type(config), None)
    if cls is not None and "next_sentence_label" in inspect.signature(cls.forward).parameters:  # type: ignore[attr-defined]
        return cls, True
    if type(config) not in transformers.MODEL_FOR_MASKED_LM_MAPPING:
        raise InputError(f"A {config.model_type} model has no masked-LM head to pre-train.")
    return transformers.MODEL_FOR_MASKED_LM_MAPPING[type(config)], False


def _registry() -> dict[str, TrainableTask]:
    """Every spec's trainables by key, in their `order`; two with one key would hide one another."""
    found = sorted((task for spec in all_specs().values() for task in spec.trainables), key=lambda task: task.order)
    registry = {task.key: task for task in found}
    assert len(registry) == len(found), "two trainables share a key"
    return registry


TRAINABLE: dict[str, TrainableTask] = _registry()
