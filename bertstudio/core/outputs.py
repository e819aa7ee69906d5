"""The one output policy every writer follows (train, search, check --failures, export, runs, fix on
failures, workspace, picture exports).

- Never replace a file we did not create unless asked: `output_file(path, overwrite=False)` refuses an
  existing file before any work starts (the CLI's `--overwrite`; the window passes `overwrite=True`
  after its own "Replace?" dialog).
- Write atomically: `atomic_path` gives a temporary file beside the target, renamed over it only when
  complete, removed on any failure (a full disk, Ctrl+C); `write_text` / `write_bytes` use it.
- A folder in use is locked: `folder_lock` is training's run lock (`<folder>.lock`, core/training/
  locks.py), so a second search, train or export into it is refused in one line naming the first.
- Outputs go beside the user's data or where the user says, never into the installed package:
  `refuse_inside_package` (the bertstudio package and its resources/ folder).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bertstudio.core.errors import InputError

if TYPE_CHECKING:
    from bertstudio.core.training.locks import HeldLock

_PACKAGE = Path(__file__).resolve().parent.parent  # bertstudio/
_SOURCE_RESOURCES = _PACKAGE.parent / "resources"  # resources/ of a source checkout
_UMASK = os.umask(0o022)  # read once (os.umask sets it too): set back at once, before any thread writes
os.umask(_UMASK)


def package_folders() -> tuple[Path, ...]:
    """Where the app itself lives: nothing we write may go there (an upgrade would lose it, and a
    wheel's folder may be read-only or shared)."""
    return (_PACKAGE, _SOURCE_RESOURCES.resolve())


def inside_package(path: str | Path) -> bool:
    resolved = Path(path).expanduser().resolve()
    return any(resolved == folder or folder in resolved.parents for folder in package_folders())


def refuse_inside_package(path: str | Path, what: str = "output") -> None:
    if inside_package(path):
        raise InputError(f"The {what} '{path}' is inside BERT Studio's own folder, where nothing is written.",
                         hint="Choose a place beside your data or in your home folder.")


def output_file(path: str | Path, what: str = "output file", overwrite: bool = False) -> Path:
    """`path` checked as a file we may write, before any work: its folder exists and is a folder, it is
    not in the installed package, and it is new (or a regular file and `overwrite`)."""
    target = Path(path).expanduser()
    if not target.name or target.name in {".", ".."}:
        raise InputError(f"The {what} '{path}' is not a file name.", hint="Give the name of a new file.")
    folder = target.parent
    if not folder.is_dir():
        raise InputError(f"The {what}'s folder '{folder}' does not exist.",
                         hint="Create the folder first, or choose a file in an existing one.")
    refuse_inside_package(target, what)
    try:
        info = target.lstat()
    except FileNotFoundError:
        return target
    except OSError as error:
        raise InputError(f"The {what} '{target}' cannot be checked: {error.strerror or error}.") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"The {what} '{target}' exists and is not a regular file; it is never replaced.",
                         hint="Give the name of a new file.")
    if not overwrite:
        raise InputError(f"The {what} '{target}' already exists; it is not replaced unless you ask.",
                         hint="Pass --overwrite to replace it, or give the name of a new file.")
    return target


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary file beside `path` to write; renamed over `path` when the block ends without an
    error, removed otherwise, so `path` is never half-written."""
    target = Path(path).expanduser()
    handle, name = tempfile.mkstemp(dir=target.parent if str(target.parent) else ".", prefix=f".{target.name}.",
                                    suffix=f".partial{target.suffix}")  # the suffix: writers that read it
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        os.chmod(temporary, _mode_for(target))  # mkstemp's 0600 would hide a new file from the user's group
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def _mode_for(target: Path) -> int:
    """A replaced file keeps its permissions; a new one gets what `open()` gives (0666 less the umask)."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return 0o666 & ~_UMASK


def write_with(path: str | Path, write: Callable[[IO[Any]], object], text: bool = False) -> Path:
    """`write(stream)` into a temporary file beside `path` (bytes; UTF-8 text with `text`), renamed over
    `path` once it returned: a full disk or a Ctrl+C leaves `path` as it was and no partial file."""
    with atomic_path(path) as temporary, (temporary.open("w", encoding="utf-8", newline="") if text
                                          else temporary.open("wb")) as stream:
        write(stream)
    return Path(path).expanduser()


def write_bytes(path: str | Path, data: bytes) -> Path:
    """`data` written atomically to `path` (checked by the caller with `output_file`)."""
    return write_with(path, lambda stream: stream.write(data))


def write_text(path: str | Path, text: str) -> Path:
    """`text` (UTF-8) written atomically to `path`."""
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: str | Path, value: object, indent: int | None = 2) -> Path:
    """`value` as valid JSON (core.json_values.dumps: no NaN or Infinity), written atomically."""
    from bertstudio.core.json_values import dumps

    return write_text(path, dumps(value, indent=indent) + "\n")


def lock_path(output: Path) -> Path:
    """Where the lock of an output (a folder, or a file such as an .onnx) lives: `<output>.lock` beside it."""
    return output.with_name(output.name + ".lock")


def folder_lock(folder: Path, task: str) -> contextlib.AbstractContextManager[HeldLock]:
    """`<folder>.lock` held while `task` writes into `folder`: a second writer is refused in one line
    (core/training/locks.py: a lock left by a dead process is taken over)."""
    from bertstudio.core.training import locks

    return locks.run_lock(folder, lock_path(folder), task)
