"""Which tasks Evaluate scores, and which task a checkpoint is scored as.

`evaluable`/`adapter_for` live in evaluable.py (no training import: the task packages' readers
reach them); what needs the training side's task table (`evaluated_as`) is here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bertstudio.core.errors import BertStudioError
from bertstudio.core.evaluate.evaluable import adapter_for, evaluable, names_text
from bertstudio.core.tasks.spec import all_specs

__all__ = ["adapter_for", "checkpoint_task", "evaluable", "evaluated_as", "names_text", "trained_for"]


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


def trained_for(architectures: Sequence[str]) -> str | None:
    """The evaluable task a checkpoint's saved class was trained for ("BertForQuestionAnswering" ->
    qa, "BertForPreTraining" -> its masked LM); None for a bare encoder or an unknown class.
    The class names the head that was trained: scoring a classifier as a masked LM (whose head would
    be initialised at random) is never what a person means."""
    for spec in all_specs().values():
        head = spec.model_class.removeprefix("AutoModel")  # "ForQuestionAnswering"; "" for a bare encoder
        if head and any(name.endswith(head) for name in architectures):
            task = evaluated_as(spec.key)
            return task if task in evaluable() else None
    return None


def checkpoint_task(source: str) -> str | None:
    """`trained_for` of a local model folder's config.json (read through its checked reader); None
    for a Hub id, a folder without a readable config, or a config that names no head."""
    from bertstudio.core.model_folder import read_config

    folder = Path(source).expanduser()
    if not folder.is_dir():
        return None
    try:
        config = read_config(folder)
    except BertStudioError:
        return None  # the load itself says what is wrong with the folder
    names = config.get("architectures") or []
    return trained_for([str(name) for name in names]) if isinstance(names, list) else None
