"""Local model folders: what is there, its architecture, and which tasks its weights support.

Judged from config.json and the safetensors header alone (anatomy/checkpoint.py): no model is built,
and neither torch nor transformers is imported, so a hundred folders list in a fraction of a second.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from bertstudio.core.anatomy.checkpoint import custom_code_reason, judge_folder
from bertstudio.core.errors import BertStudioError, InputError
from bertstudio.core.model_folder import check_folder, read_config

MODELS_DIR_ENV = "BERTSTUDIO_MODELS_DIR"
# A models folder is scanned two levels deep (org/name): bound the entries looked at and the
# folders listed, so a home directory or a mount with millions of files cannot stall the listing.
MAX_SCANNED_ENTRIES = 20_000
MAX_MODEL_FOLDERS = 500


@dataclass(frozen=True)
class LocalModel:
    """One folder of a models directory, judged by its weights (the head report), not its name."""

    name: str
    path: str
    architecture: str
    model_type: str
    tasks: tuple[str, ...]
    problem: str = ""
    # False while only config.json was read (`glance`: the folders list at once, their weights are
    # judged after): `tasks` is then not known yet, not empty.
    judged: bool = True
    note: str = ""  # how the tasks were judged where not from the tensors, or what did not fit

    def to_json(self) -> dict[str, object]:
        return {key: list(value) if key == "tasks" else value for key, value in asdict(self).items()
                if key != "judged"}


def models_dir_from_env(explicit: str | None = None) -> Path | None:
    """--models-dir wins over BERTSTUDIO_MODELS_DIR; None when neither is set."""
    value = explicit or os.environ.get(MODELS_DIR_ENV, "")
    return Path(value).expanduser() if value.strip() else None


class Listing(list):
    """The LocalModels found, and `note` when the scan stopped at a bound (else "")."""

    note: str = ""


def _subfolders(folder: Path, budget: list[int]) -> list[Path]:
    """`folder`'s visible subfolders, sorted; stops when the shared entry budget is spent."""
    found = []
    try:
        for entry in folder.iterdir():
            budget[0] -= 1
            if budget[0] < 0:
                break
            if not entry.name.startswith(".") and entry.is_dir():
                found.append(entry)
    except OSError:  # unreadable child: skip it, list the others
        pass
    return sorted(found)


def _has_config(folder: Path) -> bool:
    try:
        # a FIFO is listed with its problem, never read; a LoRA adapter folder lists as a model
        return (folder / "config.json").exists() or (folder / "adapter_config.json").exists()
    except OSError:
        return False


def _model_folders(root: Path) -> tuple[list[Path], bool]:
    """Folders holding a config.json: the root itself, its children and grandchildren (org/name);
    True when a bound stopped the scan."""
    budget = [MAX_SCANNED_ENTRIES]
    found = [root] if _has_config(root) else []
    for child in _subfolders(root, budget):
        if len(found) >= MAX_MODEL_FOLDERS or budget[0] < 0:
            return found, True
        if _has_config(child):
            found.append(child)
        else:
            found += [g for g in _subfolders(child, budget) if _has_config(g)]
    return found[:MAX_MODEL_FOLDERS], len(found) > MAX_MODEL_FOLDERS or budget[0] < 0


def _from_config(folder: Path) -> tuple[LocalModel, dict[str, object] | None]:
    """The folder as its config.json names it, and the config (None: the config is wrong, said)."""
    if (folder / "adapter_config.json").exists() and not (folder / "config.json").exists():
        from bertstudio.core import adapter_folder

        try:
            return LocalModel(folder.name, str(folder), *adapter_folder.glance_adapter(folder), (), judged=False), {}
        except BertStudioError as error:
            return LocalModel(folder.name, str(folder), "?", "?", (), error.message), None
    try:
        config = read_config(folder)
    except BertStudioError as error:
        return LocalModel(folder.name, str(folder), "?", "?", (), error.message), None
    architecture = ", ".join(str(name) for name in config.get("architectures") or []) or "?"
    return LocalModel(folder.name, str(folder), architecture, str(config.get("model_type", "?")), (),
                      judged=False), config


def glance(folder: Path) -> LocalModel:
    """One folder from its config.json alone (no transformers, no weights): what lists at once."""
    return _from_config(folder)[0]


def describe(folder: Path) -> LocalModel:
    """One folder, judged without building a model: the validated config.json first (types, bounds,
    custom code), then the folder (weights, tokenizer), then its heads from the safetensors header."""
    named, config = _from_config(folder)
    if config is None:
        return named
    architecture, model_type = named.architecture, named.model_type
    if config == {}:  # a LoRA adapter folder (see _from_config): its base decides what loads
        from bertstudio.core.model_checks import adapter_tasks

        try:
            return replace(named, tasks=adapter_tasks(folder), judged=True)
        except BertStudioError as error:
            return replace(named, problem=error.message, judged=True)
    reason = custom_code_reason(config)
    if reason:  # auto_map included: the stock class would run other code than the checkpoint's
        return LocalModel(folder.name, str(folder), architecture, model_type, (), reason)
    try:
        check_folder(folder)
        judged = judge_folder(folder, config)
    except BertStudioError as error:
        return LocalModel(folder.name, str(folder), architecture, model_type, (), error.message)
    except Exception as error:  # a broken folder must not hide the others
        return LocalModel(folder.name, str(folder), architecture, model_type, (), str(error))
    return LocalModel(folder.name, str(folder), architecture, model_type, judged.tasks, "", note=judged.note)


def list_local_models(root: Path, judge: bool = True) -> Listing:
    """Every model folder under `root` (at most MAX_MODEL_FOLDERS), each described by `describe`, or
    with `judge=False` by `glance` (config.json only, no weights file opened)."""
    if not root.is_dir():
        raise InputError(f"Models folder '{root}' does not exist.", hint="Choose an existing folder.")
    folders, stopped = _model_folders(root)
    listing = Listing((describe if judge else glance)(folder) for folder in folders)
    if stopped:
        listing.note = (f"Only the first {len(folders)} model folders are listed: the scan stops after "
                        f"{MAX_MODEL_FOLDERS} folders or {MAX_SCANNED_ENTRIES:,} entries. Point the models "
                        "folder at a smaller folder.")
    return listing
