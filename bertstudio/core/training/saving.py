"""Never lose a user's files: where a run may write, the lock, the marker, complete checkpoints.

Every folder a run creates (the model folder, `<output>.checkpoints`, `<output>.partial`)
carries a marker file, `bertstudio-run.json`; a folder without it is the user's and is
never replaced, emptied or deleted. `<output>.lock` keeps a second run off the same output.
The model folder appears by renames only, so it is never half-written; a failed save
(disk full) removes its `.partial` folder.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import pickle
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from bertstudio.core.errors import BertStudioError, DeviceError, InputError
from bertstudio.core.files import small_json_or_none
from bertstudio.core.outputs import write_text

MARKER = "bertstudio-run.json"
CHECKPOINT_FILES = ("config.json", "trainer_state.json", "optimizer.pt", "scheduler.pt")

MAX_MARKER_BYTES = 4096
DISK_FULL_WORDS = ("No space left on device", "StorageFull", "Disk quota exceeded", "os error 28", "code: 28")


def resolved(output_dir: str | Path) -> Path:
    """The absolute output folder; a symlink loop or an unknown ~user is an InputError, not a crash."""
    try:
        path = Path(output_dir).expanduser().resolve()
        try:  # Python 3.13's resolve() returns a loop unresolved where 3.11's raised: stat says ELOOP
            path.stat()
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise
        return path
    except (OSError, RuntimeError) as error:
        loop = isinstance(error, RuntimeError) and "loop" in str(error).lower() or getattr(
            error, "errno", None) == errno.ELOOP
        what = "is a symbolic link that points to itself (a loop)" if loop else f"cannot be used ({error})"
        raise InputError(f"The output '{output_dir}' {what}.", hint="Choose another folder.") from None


def checkpoints_dir(output_dir: str | Path) -> Path:
    """Resumable Trainer checkpoints and the live event log, beside the model folder."""
    output = resolved(output_dir)
    return output.with_name(output.name + ".checkpoints")


def partial_dir(output: Path) -> Path:
    return output.with_name(output.name + ".partial")


def _marker_data(folder: Path) -> dict | None:
    """The marker's JSON object if it is a small regular file (not a link) of app "bertstudio"."""
    data = small_json_or_none(folder / MARKER, MAX_MARKER_BYTES)
    return data if isinstance(data, dict) and data.get("app") == "bertstudio" else None


def read_marker(folder: Path) -> dict[str, str] | None:
    """The folder's run marker, or None unless it is one: a small regular file (not a link) holding
    a JSON object with app "bertstudio" and a non-empty text kind and task. Empty, binary, wrong
    types, other nesting or oversized markers are not ours, so their folder is never replaced."""
    data = _marker_data(folder)
    if data is None:
        return None
    fields = {name: data.get(name) for name in ("kind", "task")}
    if not all(isinstance(v, str) and 0 < len(v) <= 100 for v in fields.values()):
        return None
    created = data.get("created")
    return {"app": "bertstudio", **fields, "created": created[:40] if isinstance(created, str) else ""}  # type: ignore[dict-item]


def is_ours(folder: Path) -> bool:
    return read_marker(folder) is not None


def marker_run(folder: Path) -> object:
    """The "run" record of a marker (what the run is, for a resume to compare; see resume.py), or None."""
    data = _marker_data(folder)
    return data.get("run") if data is not None and read_marker(folder) is not None else None


def write_marker(folder: Path, kind: str, task: str, run: dict[str, str] | None = None) -> None:
    """Mark a folder as created by BERT Studio (only such folders are ever replaced or removed), with
    what the run is (`run`) where a resume will compare it. Written beside and renamed into place, so
    a full disk never leaves an empty marker."""
    folder.mkdir(parents=True, exist_ok=True)
    record = {"app": "bertstudio", "kind": kind, "task": task, "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
    if run is not None:
        record["run"] = run  # type: ignore[assignment]
    write_text(folder / MARKER, json.dumps(record, ensure_ascii=False))


def _writable(folder: Path) -> str | None:
    """Why nothing can be written in the nearest existing folder of `folder`, or None (a real write probe:
    permission bits say nothing for root or read-only mounts)."""
    existing = folder
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        return f"'{existing}' is a file, not a folder"
    probe = existing / f".bertstudio-probe-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError as error:
        return f"'{existing}' is not writable ({error.strerror or error})"
    os.close(fd)
    probe.unlink(missing_ok=True)
    return None


def check_output(output_dir: str, replace: bool) -> Path:
    """The resolved output folder, after refusing every place that would lose the user's files.

    `replace`: an earlier BERT Studio run there may be replaced (--overwrite, or --resume of it).
    """
    from bertstudio.core.outputs import refuse_inside_package

    output = resolved(output_dir)
    refuse_inside_package(output, "output folder")
    cwd, home = Path.cwd().resolve(), Path.home().resolve()
    if output == output.parent or output == home or output in cwd.parents or output == cwd:
        raise InputError(f"'{output}' cannot be the output folder: it holds other files and would be replaced.",
                         hint="Choose a new folder for the model, e.g. a sub-folder of it.")
    if output.is_file():
        raise InputError(f"The output '{output}' is a file.", hint="Choose a folder for the trained model.")
    if output.exists() and not output.is_dir():  # a pipe, a socket, a device: never moved aside
        raise InputError(f"The output '{output}' is not a folder (a pipe, a socket or a device).",
                         hint="Choose a folder for the trained model.")
    suggestion = output / "bertstudio-model"
    if output.is_dir() and any(output.iterdir()):
        if not is_ours(output):
            raise InputError(f"'{output}' already exists and is not a BERT Studio model folder; it is never "
                             "replaced.", hint=f"Choose a new folder, e.g. {suggestion}.")
        if not replace:
            raise InputError(f"'{output}' holds an earlier BERT Studio run.",
                             hint="Pass --overwrite to replace it (or --resume to continue it), "
                                  "or choose a new folder.")
    ckpt = checkpoints_dir(output)
    if not replace and ckpt.is_dir() and is_ours(ckpt) and any(ckpt.glob("checkpoint-*")):
        raise InputError(f"'{ckpt}' holds the checkpoints of an earlier run.",
                         hint="Pass --resume to continue it, --overwrite to start again, or choose a new folder.")
    for extra in (ckpt, partial_dir(output)):
        if extra.exists() and not (extra.is_dir() and (is_ours(extra) or not any(extra.iterdir()))):
            raise InputError(f"'{extra}' exists and was not made by BERT Studio; it is never replaced.",
                             hint="Move it away or choose another output folder.")
    problem = _writable(output.parent)
    if problem:
        raise InputError(f"The model cannot be saved to '{output}': {problem}.",
                         hint="Choose a folder you can write to.")
    return output


# -- saving ---------------------------------------------------------------------------------------
def replace_folder(partial: Path, final: Path) -> None:
    """Put the finished folder in place by renames only, so `final` is never half-written.
    `final` was checked to be empty or ours before the run started."""
    old = final.with_name(final.name + f".old-{os.getpid()}")
    if final.exists():
        final.rename(old)
    partial.rename(final)
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)


def remove_ours(folder: Path) -> bool:
    """Delete a folder only if it carries our marker (a symbolic link is never followed); True only if
    it is gone afterwards."""
    if folder.is_symlink() or not folder.is_dir() or not is_ours(folder):
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return not folder.exists()


def disk_full(error: BaseException, folder: Path | None = None) -> bool:
    """Whether a failed write ran out of space. safetensors raises its own SafetensorError and
    torch.save a RuntimeError ("file write failed"), not an OSError: we read their words, the
    errors they were raised from, and, as a last resort, the free space left where we wrote."""
    seen: BaseException | None = error
    for _depth in range(4):
        if seen is None:
            break
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if any(word in str(seen) for word in DISK_FULL_WORDS):
            return True
        seen = seen.__cause__ or seen.__context__
    if folder is None or not isinstance(error, (OSError, RuntimeError)):
        return False
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        return shutil.disk_usage(existing).free < 1024 * 1024
    except OSError:
        return False


@contextlib.contextmanager
def saving_to(partial: Path | None, what: str = "the model", where: Path | None = None) -> Iterator[None]:
    """Turn a failed write into one message and remove the half-written `.partial` folder
    (on any failure, Ctrl+C included). `where`: the folder written to, for the free-space check."""
    try:
        yield
    except BaseException as error:
        full = not isinstance(error, BertStudioError) and disk_full(error, where or partial)
        if partial is not None:
            shutil.rmtree(partial, ignore_errors=True)
        if full:
            raise DeviceError(f"The disk is full: {what} could not be saved; nothing half-written was left.",
                              hint="Free some space and resume (a stopped run's checkpoint is kept).",
                              details=repr(error)[:2000]) from error
        if isinstance(error, OSError):
            raise InputError(f"{what[0].upper()}{what[1:]} could not be saved: {error.strerror or error}.",
                             details=repr(error)) from error
        raise


def remove_if_created(folder: Path, created: bool) -> bool:
    """After a failed run: remove the checkpoints folder this run created, unless it holds a complete
    checkpoint (the user may resume from it). A folder that was there before is never touched."""
    if not created or not folder.is_dir():
        return False
    for candidate in folder.glob("checkpoint-*"):
        try:
            if candidate.is_dir() and checkpoint_problem(candidate) is None:
                return False
        except Exception:  # noqa: BLE001 - a checkpoint we cannot judge is kept
            return False
    shutil.rmtree(folder, ignore_errors=True)
    return True


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


# -- checkpoints ---------------------------------------------------------------------------------
def _checkpoint_number(folder: Path) -> int:
    try:
        return int(folder.name.rsplit("-", 1)[1])
    except (IndexError, ValueError):
        return -1


def checkpoint_problem(folder: Path) -> str | None:
    """Why `folder` is not a complete checkpoint, or None. Unsafe pickles raise InputError.

    Every file Trainer reads on resume must exist and load the way Trainer loads it
    (weights_only=True): a kill -9 mid-write leaves a folder that fails here, not in Trainer.
    """
    import torch
    from safetensors import safe_open
    from transformers.trainer_pt_utils import safe_globals

    adapter = (folder / "adapter_config.json").is_file()  # a LoRA run's checkpoint: the adapter, no config.json
    missing = [name for name in CHECKPOINT_FILES if not (folder / name).is_file()
               and not (adapter and name == "config.json")]
    weights = sorted(folder.glob("adapter_model*.safetensors" if adapter else "model*.safetensors"))
    rng = sorted(folder.glob("rng_state*.pth"))
    if missing or not weights or not rng:
        return "missing " + ", ".join(missing + ([] if weights else ["model weights"]) + ([] if rng else ["rng state"]))
    try:
        json.loads((folder / "trainer_state.json").read_text(encoding="utf-8"))
        for weight in weights:
            with safe_open(str(weight), framework="pt") as handle:
                list(handle.keys())
    except Exception as error:  # noqa: BLE001 - any unreadable file makes the checkpoint incomplete
        return f"unreadable ({type(error).__name__})"
    for path in [folder / "optimizer.pt", folder / "scheduler.pt", *rng]:
        try:
            with safe_globals():
                torch.load(path, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError as error:
            if "weights only" in str(error).lower() or "weights_only" in str(error).lower():
                raise InputError(
                    f"{path} contains code or objects that a checkpoint never holds; it was not loaded.",
                    hint="Resume only checkpoints you trust; start a new run (or delete that checkpoint).",
                    details=str(error)[:2000]) from None
            return f"{path.name} is damaged"
        except Exception as error:  # noqa: BLE001 - truncated or half-written
            return f"{path.name} is incomplete ({type(error).__name__})"
    return None


def resume_checkpoint(ckpt_dir: Path) -> tuple[Path, list[str]]:
    """The newest complete checkpoint, and a note for each newer incomplete one (removed: ours)."""
    folders = sorted((p for p in ckpt_dir.glob("checkpoint-*") if p.is_dir() and _checkpoint_number(p) >= 0),
                     key=_checkpoint_number, reverse=True) if ckpt_dir.is_dir() else []
    if not folders:
        raise InputError(f"There is no checkpoint to resume in {ckpt_dir}.",
                         hint="Start a new run (a stopped run leaves one).")
    notes: list[str] = []
    for folder in folders:
        problem = checkpoint_problem(folder)
        if problem is None:
            return folder, notes
        notes.append(f"{folder.name} is incomplete ({problem}); skipped and removed.")
        if is_ours(ckpt_dir):
            shutil.rmtree(folder, ignore_errors=True)
    raise InputError(f"There is no complete checkpoint to resume in {ckpt_dir}.",
                     hint="Start a new run (a stopped run leaves one; pass --overwrite to replace the old one).",
                     details="\n".join(notes))
