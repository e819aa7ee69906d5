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
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from bertstudio.core.errors import DeviceError, InputError

MARKER = "bertstudio-run.json"
CHECKPOINT_FILES = ("config.json", "trainer_state.json", "optimizer.pt", "scheduler.pt")
PICKLED = ("optimizer.pt", "scheduler.pt", "rng_state*.pth")


def checkpoints_dir(output_dir: str | Path) -> Path:
    """Resumable Trainer checkpoints and the live event log, beside the model folder."""
    output = Path(output_dir).expanduser().resolve()
    return output.with_name(output.name + ".checkpoints")


def partial_dir(output: Path) -> Path:
    return output.with_name(output.name + ".partial")


def lock_path(output: Path) -> Path:
    return output.with_name(output.name + ".lock")


def is_ours(folder: Path) -> bool:
    return (folder / MARKER).is_file()


def write_marker(folder: Path, kind: str, task: str) -> None:
    """Mark a folder as created by BERT Studio (only such folders are ever replaced or removed)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKER).write_text(json.dumps({"app": "bertstudio", "kind": kind, "task": task,
                                             "created": time.strftime("%Y-%m-%dT%H:%M:%S")}), encoding="utf-8")


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
    output = Path(output_dir).expanduser().resolve()
    cwd, home = Path.cwd().resolve(), Path.home().resolve()
    if output == output.parent or output == home or output in cwd.parents or output == cwd:
        raise InputError(f"'{output}' cannot be the output folder: it holds other files and would be replaced.",
                         hint="Choose a new folder for the model, e.g. a sub-folder of it.")
    if output.is_file():
        raise InputError(f"The output '{output}' is a file.", hint="Choose a folder for the trained model.")
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


# -- the lock ------------------------------------------------------------------------------------
def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def run_lock(output: Path, task: str) -> Iterator[Path]:
    """`<output>.lock` for the length of the run; a second run on the same output is refused,
    naming the first. A lock left by a process that no longer exists (kill -9) is taken over."""
    path = lock_path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    me = {"pid": os.getpid(), "host": socket.gethostname(), "task": task,
          "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    for _attempt in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                other = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                other = {}
            pid, host = int(other.get("pid", 0) or 0), other.get("host")
            if pid and host == me["host"] and not _alive(pid):
                path.unlink(missing_ok=True)  # stale: its process is gone
                continue
            raise InputError(
                f"Another run is writing to '{output}' (process {pid or '?'} on {host or '?'}, "
                f"started {other.get('started', '?')}).",
                hint=f"Wait for it to end or choose another output folder (lock file: {path}).") from None
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(me, handle)
        break
    try:
        yield path
    finally:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(path.read_text(encoding="utf-8")).get("pid") == me["pid"]:
                path.unlink()


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
    """Delete a folder only if it carries our marker; True if it was removed."""
    if folder.is_dir() and is_ours(folder):
        shutil.rmtree(folder, ignore_errors=True)
        return True
    return False


@contextlib.contextmanager
def saving_to(partial: Path | None, what: str = "the model") -> Iterator[None]:
    """Turn a failed write into one message and remove the half-written `.partial` folder."""
    try:
        yield
    except OSError as error:
        if partial is not None:
            shutil.rmtree(partial, ignore_errors=True)
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DeviceError(f"The disk is full: {what} could not be saved; nothing half-written was left.",
                              hint="Free some space and resume (a stopped run's checkpoint is kept).") from error
        raise InputError(f"{what[0].upper()}{what[1:]} could not be saved: {error.strerror or error}.",
                         details=repr(error)) from error


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

    missing = [name for name in CHECKPOINT_FILES if not (folder / name).is_file()]
    weights = sorted(folder.glob("model*.safetensors"))
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
