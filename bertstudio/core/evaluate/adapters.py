"""Which tasks Evaluate scores, and which task a checkpoint is scored as.

`evaluable` lives in evaluable.py (no training import: the task packages' readers reach it); what
needs the training side's task table (`evaluated_as`) is here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bertstudio.core.errors import BertStudioError
from bertstudio.core.evaluate.evaluable import evaluable
from bertstudio.core.tasks.spec import TaskSpec, all_specs

__all__ = ["checkpoint_task", "evaluable", "evaluated_as", "load_task", "trained_for"]


def evaluated_as(task: str) -> str:
    """The task a model of `task` is scored as: its own where Evaluate scores it, else the first
    evaluable task the training side opens its result in (a pre-trained model: its masked LM)."""
    specs = evaluable()
    if task in specs:
        return task
    from bertstudio.core.training.trainable import TRAINABLE

    trainable = TRAINABLE.get(task)
    opens = [key for key in trainable.open_in if key in specs] if trainable is not None else []
    return opens[0] if opens else task


def _trained_spec(architectures: Sequence[str]) -> TaskSpec | None:
    """The spec whose head a checkpoint's saved class names ("BertForQuestionAnswering" -> qa); None
    for a bare encoder or an unknown class."""
    for spec in all_specs().values():
        head = spec.model_class.removeprefix("AutoModel")  # "ForQuestionAnswering"; "" for a bare encoder
        if head and any(name.endswith(head) for name in architectures):
            return spec
    return None


def trained_for(architectures: Sequence[str]) -> str | None:
    """The evaluable task a checkpoint's saved class was trained for ("BertForPreTraining" -> its masked
    LM); None for a bare encoder or an unknown class. The class names the head that was trained: scoring
    a classifier as a masked LM (whose head would be initialised at random) is never what a person means."""
    spec = _trained_spec(architectures)
    task = evaluated_as(spec.key) if spec is not None else None
    return task if task in evaluable() else None


def carried_tasks(architectures: Sequence[str]) -> tuple[str, ...]:
    """Every evaluable task whose head a checkpoint of these classes carries: its own spec's and the
    tasks its training opens it in (a BertForPreTraining: masked LM and next sentence)."""
    from bertstudio.core.training.trainable import TRAINABLE

    spec = _trained_spec(architectures)
    if spec is None:
        return ()
    trainable = TRAINABLE.get(spec.key)
    keys, known = (spec.key, *(trainable.open_in if trainable is not None else ())), evaluable()
    return tuple(dict.fromkeys(key for key in keys if key in known))


def load_task(source: str, task: str) -> str:
    """The task to load `source` as, decided from its config before any load: `task` where the
    checkpoint carries its head (or says nothing), else the task it was trained for (a classifier
    picked while the task is Masked LM was loaded twice, once with a random head: issue 29)."""
    trained = checkpoint_task(source)
    if trained is None or trained == task:
        return task
    return task if task in carried_tasks(_architectures(source)) else trained


def _architectures(source: str) -> list[str]:
    """The classes a local model folder's config.json names (read through its checked reader); [] for a
    Hub id or a folder without a readable config (the load itself says what is wrong with the folder)."""
    from bertstudio.core.model_folder import read_config

    folder = Path(source).expanduser()
    try:
        names = (read_config(folder).get("architectures") or []) if folder.is_dir() else []
    except BertStudioError:
        return []
    return [str(name) for name in names] if isinstance(names, list) else []


def checkpoint_task(source: str) -> str | None:
    """`trained_for` of a local model folder's config.json; None for a Hub id, a folder without a readable
    config, or a config that names no head."""
    return trained_for(_architectures(source))
