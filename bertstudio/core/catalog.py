"""Local model folders: what is there, its architecture, and which tasks its weights support."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from bertstudio.core.errors import BertStudioError, InputError
from bertstudio.core.models import custom_code_reason, probe_heads
from bertstudio.core.tasks.spec import all_specs

MODELS_DIR_ENV = "BERTSTUDIO_MODELS_DIR"


@dataclass(frozen=True)
class LocalModel:
    """One folder of a models directory, judged by its weights (the head report), not its name."""

    name: str
    path: str
    architecture: str
    model_type: str
    tasks: tuple[str, ...]
    problem: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "path": self.path,
            "architecture": self.architecture,
            "model_type": self.model_type,
            "tasks": list(self.tasks),
            "problem": self.problem,
        }


def models_dir_from_env(explicit: str | None = None) -> Path | None:
    """--models-dir wins over BERTSTUDIO_MODELS_DIR; None when neither is set."""
    value = explicit or os.environ.get(MODELS_DIR_ENV, "")
    return Path(value).expanduser() if value.strip() else None


def _model_folders(root: Path) -> list[Path]:
    """Folders holding a config.json: the root itself, its children and grandchildren (org/name)."""
    found = [root] if (root / "config.json").is_file() else []
    for child in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if (child / "config.json").is_file():
            found.append(child)
        else:
            found += sorted(g for g in child.iterdir() if g.is_dir() and (g / "config.json").is_file())
    return found


def supported_tasks(folder: Path) -> tuple[str, ...]:
    """Tasks whose head weights are all present in the checkpoint."""
    tasks = []
    for task in all_specs():
        try:
            if probe_heads(folder, task).complete:
                tasks.append(task)
        except BertStudioError:
            continue
    return tuple(tasks)


def describe(folder: Path) -> LocalModel:
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return LocalModel(folder.name, str(folder), "?", "?", (), f"unreadable config.json: {error}")
    if not isinstance(config, dict):
        return LocalModel(folder.name, str(folder), "?", "?", (), "config.json is not a JSON object")
    architecture = ", ".join(config.get("architectures") or []) or "?"
    model_type = str(config.get("model_type", "?"))
    reason = custom_code_reason(config)
    if reason and model_type not in _known_types():
        return LocalModel(folder.name, str(folder), architecture, model_type, (), reason)
    try:
        tasks = supported_tasks(folder)
    except Exception as error:  # a broken folder must not hide the others
        return LocalModel(folder.name, str(folder), architecture, model_type, (), str(error))
    # auto_map on a known type: the standard classes may still serve some tasks; if none, say why.
    return LocalModel(folder.name, str(folder), architecture, model_type, tasks, "" if tasks else reason)


def _known_types() -> set[str]:
    from transformers import CONFIG_MAPPING

    return set(CONFIG_MAPPING.keys())


def list_local_models(root: Path) -> list[LocalModel]:
    if not root.is_dir():
        raise InputError(f"Models folder '{root}' does not exist.", hint="Choose an existing folder.")
    return [describe(folder) for folder in _model_folders(root)]
