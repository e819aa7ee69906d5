"""The registry of trainable tasks: `TRAINABLE[config.task]` is what the engine, the `train` CLI and
the Train tab ask; none of them branches on the task itself.

Each task package declares its trainables on its spec (`TaskSpec.trainables`, defined in
core/tasks/<task>/train.py on top of base.TrainableTask); this module only collects them, in their
`order`. Where a result opens is not a list of app task keys either: a trainable names the
transformers heads its saved model carries (`heads`), and the result opens in every task spec whose
model class is one of them (a new task spec with such a head is offered without an edit here).
"""

from __future__ import annotations

from bertstudio.core.tasks.spec import all_specs
from bertstudio.core.training.base import Data, TrainableTask

__all__ = ["TRAINABLE", "Data", "TrainableTask"]  # Data: engine.py imports it from here


def _registry() -> dict[str, TrainableTask]:
    """Every spec's trainables by key, in their `order`; two with one key would hide one another."""
    found = sorted((task for spec in all_specs().values() for task in spec.trainables), key=lambda task: task.order)
    registry = {task.key: task for task in found}
    assert len(registry) == len(found), "two trainables share a key"
    return registry


TRAINABLE: dict[str, TrainableTask] = _registry()
