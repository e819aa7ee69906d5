"""One border for every file a user names: what it is, whether we may read it, how big it is.

`/dev/zero` and FIFOs pass an `is_file()` check written as `not is_dir()`, and reading them
never ends; a symlink loop raises `OSError` from `stat`; a folder or a missing path each
need their own words. Every reader of a user-given file (data files, text files, contexts,
workspaces) starts here, so each of those answers is written once.
"""

from __future__ import annotations

import errno
import json
import stat
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.limits import MAX_FILE_BYTES


def regular_file(path: str | Path, what: str = "file", max_bytes: int = MAX_FILE_BYTES) -> Path:
    """`path` if it names a readable regular file of at most `max_bytes`; else an InputError
    that says what it is instead (missing, a folder, a device or pipe, a symlink loop, too big)."""
    path = Path(path).expanduser()
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputError(f"The {what} '{path}' does not exist.", hint="Choose an existing file.") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise InputError(f"The {what} '{path}' is a symbolic link that points to itself (a loop).") from None
        raise InputError(f"The {what} '{path}' cannot be read: {error.strerror or error}.") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"The {what} '{path}' is a folder, not a file.", hint="Choose a file inside it.")
    if not stat.S_ISREG(info.st_mode):
        kind = "a pipe (FIFO)" if stat.S_ISFIFO(info.st_mode) else (
            "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else
            "a socket" if stat.S_ISSOCK(info.st_mode) else "not a regular file")
        raise InputError(f"The {what} '{path}' is {kind}, not a regular file.",
                         hint="Save the data to a file and choose that file.")
    if info.st_size > max_bytes:
        raise InputError(f"The {what} '{path}' is {info.st_size / 2**20:,.0f} MiB; "
                         f"at most {max_bytes / 2**20:,.0f} MiB can be read.", hint="Split it into smaller files.")
    return path


def read_bytes(path: str | Path, what: str = "file", max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The contents of a regular file (see `regular_file`), read with the same bound."""
    checked = regular_file(path, what, max_bytes)
    try:
        with checked.open("rb") as stream:
            data = stream.read(max_bytes + 1)
    except OSError as error:
        raise InputError(f"The {what} '{checked}' cannot be read: {error.strerror or error}.") from None
    if len(data) > max_bytes:  # grew while we read it
        raise InputError(f"The {what} '{checked}' is larger than {max_bytes / 2**20:,.0f} MiB.")
    return data


def read_text(path: str | Path, what: str = "file", max_bytes: int = MAX_FILE_BYTES) -> str:
    """A UTF-8 text file's contents (a BOM is dropped); binary or other encodings are refused
    with the line where decoding failed."""
    raw = read_bytes(path, what, max_bytes)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise InputError(f"The {what} '{Path(path)}' is not UTF-8 text (line {line}).",
                         hint="Save it as UTF-8.") from None
    if "\x00" in text:
        raise InputError(f"The {what} '{Path(path)}' is not a text file (it holds binary data).",
                         hint="Save it as UTF-8 text.")
    return text


def small_json_or_none(path: Path, max_bytes: int) -> Any | None:
    """The JSON in a small regular file (not a link, FIFO or device), or None: for files we wrote
    ourselves (markers, run records), where a damaged one is skipped rather than reported."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        with path.open("rb") as stream:
            return json.loads(stream.read(max_bytes + 1).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
