"""Which tasks Evaluate scores: exactly the specs with an `evaluate` adapter (no list of its own).

The Evaluate tab's picker, the CLI's `--task` choices and every per-task step of core/evaluate
read the adapter found here, so a task is evaluable where its spec says so and nowhere else.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bertstudio.core.errors import BertStudioError, InputError
from bertstudio.core.tasks.spec import EvaluateAdapter, TaskSpec, all_specs


def evaluable() -> dict[str, TaskSpec]:
    """The specs Evaluate scores, keyed by task key, in the specs' order."""
    return {key: spec for key, spec in all_specs().items() if spec.evaluate is not None}


def names_text() -> str:
    """'fill-mask, nsp, … or choice': the CLI names, for messages."""
    names = [spec.cli_name for spec in evaluable().values()]
    return f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else "".join(names)


def adapter_for(task: str) -> EvaluateAdapter:
    """The adapter of the task `task` (a spec key); a clear error for a task Evaluate cannot score."""
    spec = all_specs().get(task)
    if spec is None or spec.evaluate is None:
        raise InputError(f"Evaluation does not support the task '{task}'.", hint=f"Choose {names_text()}.")
    return spec.evaluate


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
