"""A resume is trusted only after it is compared with what it resumes.

Every run records what it is in its checkpoints folder's marker (`RunIdentity`: task, base
model, labels, training data); `--resume` compares that record, before anything is loaded,
with the run it is asked to continue, and then compares the checkpoint's own config.json (the
head it holds: architecture, labels, problem type) with the model this run built. Any
difference is refused with a message naming it: Trainer alone would continue a multiple-choice
run as a "regression model" (both heads have one output) and exit 0.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.progress import TaskControl

HASH_CHUNK = 1 << 20  # bytes hashed between two cancel checks
MAX_FIELD = 256  # characters of a recorded field; a longer model path is recorded by its hash (the marker
# is at most saving.MAX_MARKER_BYTES, written as UTF-8)


@dataclass(frozen=True)
class RunIdentity:
    """What a run is, as its checkpoints marker records it (short strings: the marker is small)."""

    model: str  # the base model: a local folder's resolved path, or the Hub id ("" from scratch)
    labels: str  # "<count> labels, sha256 <16 hex>" (the label list in order)
    data: str  # "sha256 <16 hex> of the training file, <n> rows trained on"
    teacher: str = ""  # distillation's teacher

    def to_json(self) -> dict[str, str]:
        return asdict(self)

    @staticmethod
    def from_json(value: object) -> RunIdentity | None:
        """The record, or None unless it is one (every field a short string)."""
        if not isinstance(value, dict):
            return None
        fields = {name: value.get(name, "") for name in ("model", "labels", "data", "teacher")}
        if not all(isinstance(v, str) and len(v) <= MAX_FIELD + 100 for v in fields.values()):
            return None
        return RunIdentity(**fields)


def _short(text: str) -> str:
    """`text`, or its hash where it is long or not UTF-8 (a path's odd bytes): the marker stays small."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "sha256 " + hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
    return text if len(text) <= MAX_FIELD else "sha256 " + hashlib.sha256(text.encode("utf-8")).hexdigest()


def model_source(source: str) -> str:
    """A local folder by its resolved path (however it was spelled), a Hub id as given."""
    if not source:
        return ""
    path = Path(source).expanduser()
    try:
        if path.is_dir():
            return _short(str(path.resolve()))
    except (OSError, RuntimeError):
        pass
    return _short(source)


def file_digest(path: str | Path, control: TaskControl | None = None) -> str:
    """sha256 of a file's bytes, read in chunks with a cancel check between them."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as stream:
        while chunk := stream.read(HASH_CHUNK):
            digest.update(chunk)
            if control is not None:
                control.check()
    return digest.hexdigest()[:16]


def identity(config: Any, labels: list[str], rows: int, control: TaskControl | None = None) -> RunIdentity:
    """The identity of the run `config` describes, with its data already read (`rows` trained on)."""
    label_hash = hashlib.sha256(json.dumps(labels).encode("utf-8")).hexdigest()[:16]
    distill = getattr(config, "distill", None)
    return RunIdentity(
        model=model_source(config.model),
        labels=f"{len(labels)} labels, sha256 {label_hash}",
        data=f"sha256 {file_digest(config.train_file, control)} of the training file, {rows} rows trained on",
        teacher=model_source(distill.teacher) if distill is not None else "",
    )


def check_task(recorded_task: str | None, task: str, folder: Path) -> None:
    """The cheapest comparison, made before the data is read: a run of another task is refused."""
    if recorded_task is None:
        raise InputError(f"{folder} has no readable run marker, so what its checkpoints are cannot be checked; "
                         "they are not resumed.", hint="Start a new run (pass --overwrite, or choose a new folder).")
    if recorded_task != task:
        raise InputError(f"The checkpoints in {folder} are of a '{recorded_task}' run, not '{task}': resuming "
                         "would continue the other task's weights, optimizer and schedule.",
                         hint=f"Resume with --task {recorded_task}, or start a new {task} run "
                              "(--overwrite, or another output folder).")


_WHAT = {"model": "base model", "labels": "labels", "data": "training data", "teacher": "teacher"}


def check_identity(recorded: RunIdentity | None, current: RunIdentity, folder: Path) -> str:
    """Refuse a resume whose base model, labels, data or teacher differ from the recorded run's;
    a note when the marker records none (an older version wrote it: only the task and head are compared)."""
    if recorded is None:
        return ("The checkpoints do not record their base model, labels and data (an older version wrote "
                "them): only the task and the model's head were compared.")
    differ = [f"{_WHAT[name]}: {then or '(none)'} then, {now or '(none)'} now"
              for name, then, now in ((n, getattr(recorded, n), getattr(current, n)) for n in _WHAT) if then != now]
    if differ:
        raise InputError(f"The checkpoints in {folder} are of another run; what differs: " + "; ".join(differ) + ".",
                         hint="Resume with the settings and files of that run, or start a new run "
                              "(--overwrite, or another output folder).")
    return ""


def _head(config: dict[str, Any]) -> dict[str, Any]:
    labels = config.get("id2label")
    ordered = ([str(labels[k]) for k in sorted(labels, key=lambda k: int(k) if str(k).isdigit() else -1)]
               if isinstance(labels, dict) else None)
    return {"architecture": (config.get("architectures") or [None])[0] if isinstance(config.get("architectures"),
                                                                                      list) else None,
            # transformers sets a classifier's problem type at its first forward pass: only "regression"
            # is chosen when the model is built (a regression head looks like any one-label head)
            "scores": "regression" if config.get("problem_type") == "regression" else "classes",
            "labels": ordered}


def _shown(value: object) -> str:
    """A value for a message: a long label list by its first few and its length."""
    if isinstance(value, list) and len(value) > 6:
        return ", ".join(map(str, value[:6])) + f"… ({len(value)} labels)"
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def check_adapter_checkpoint(checkpoint: Path, model: Any) -> None:
    """A LoRA checkpoint (adapter_config.json) against the adapter this run wraps: the rank, the layers
    it adapts and the head it saves must be the same, or its weights would not fit."""
    from bertstudio.core.adapter_folder import read_json

    saved = read_json(checkpoint / "adapter_config.json", "adapter config")
    config = getattr(model, "peft_config", {}).get("default")
    if config is None:
        raise InputError(f"The checkpoint {checkpoint} holds a LoRA adapter, and this run trains the whole model.",
                         hint="Resume with the LoRA settings of that run (--lora RANK), or start a new run.")
    now = {"r": config.r, "target_modules": config.target_modules, "modules_to_save": config.modules_to_save}
    differ = [f"{name}: {_shown(saved.get(name))} then, {_shown(value)} now" for name, value in now.items()
              if _comparable(saved.get(name)) != _comparable(value)]
    if differ:
        raise InputError(f"The checkpoint {checkpoint} holds another LoRA adapter than this run trains; what "
                         "differs: " + "; ".join(differ) + ".",
                         hint="Resume with the LoRA settings of that run, or start a new run (--overwrite).")


def _comparable(value: Any) -> Any:
    return sorted(value) if isinstance(value, list | set | tuple) else value


def check_checkpoint_head(checkpoint: Path, model: Any) -> None:
    """The checkpoint's config.json (read as transformers reads it) against the model this run built:
    the head its weights are for."""
    from transformers import AutoConfig

    from bertstudio.core.model_folder import load_pretrained

    if (checkpoint / "adapter_config.json").is_file() and not (checkpoint / "config.json").exists():
        check_adapter_checkpoint(checkpoint, model)
        return
    saved = load_pretrained(AutoConfig, checkpoint, f"The configuration of {checkpoint} cannot be read, so the "
                            "checkpoint cannot be compared with this run; it is not resumed.",
                            hint="Start a new run (--overwrite, or another output folder).").to_dict()
    built = model.config.to_dict()
    built["architectures"] = [type(model).__name__]
    then, now = _head(saved), _head(built)
    differ = [f"{name}: {_shown(then[name])} then, {_shown(now[name])} now" for name in then if then[name] != now[name]]
    if differ:
        raise InputError(f"The checkpoint {checkpoint} holds another model head than this run trains; what "
                         "differs: " + "; ".join(differ) + ".",
                         hint="Resume with the task and data of that run, or start a new run "
                              "(--overwrite, or another output folder).")
