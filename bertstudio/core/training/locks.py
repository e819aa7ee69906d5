"""`<output>.lock`: one run per output folder, and a lock left by a dead run never blocks the next.

The running process holds an `flock` on the lock file for the whole run. The kernel drops it
when the process ends, however it ends (kill -9, disk full, power loss), so a lock file whose
flock we can take belongs to no running run: it is stale, whatever it holds (empty, hand-edited,
binary), and is taken over with a note saying so. Its content (pid, host, start) only names the
holder in the refusal; it is read by `parse_lock`, which accepts nothing but a well-formed
record. A record naming a process that still runs on this host is respected even without its
flock (a lock from a version that did not take one); a reused pid is told apart by the
process's start time.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import stat
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from bertstudio.core.errors import DeviceError, InputError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the record alone guards the output
    fcntl = None  # type: ignore[assignment]

MAX_LOCK_BYTES = 4096
MAX_PID = 2**22  # Linux's largest pid_max
MAX_TEXT = 255


@dataclass(frozen=True)
class LockInfo:
    """Who holds (or held) a lock."""

    pid: int
    host: str
    task: str = ""
    started: str = ""
    since: int | None = None  # the process's start time in clock ticks after boot (tells a reused pid)

    def describe(self) -> str:
        return f"process {self.pid} on {self.host}, started {self.started or '?'}"


def _text(value: object) -> str:
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def parse_lock(raw: bytes) -> LockInfo | None:
    """The record in a lock file, or None for anything that is not one: empty, binary, not JSON,
    not an object, a pid that is not a plausible whole number, a missing host, oversized."""
    if not raw or len(raw) > MAX_LOCK_BYTES:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    pid, host, since = data.get("pid"), data.get("host"), data.get("since")
    if type(pid) is not int or not 0 < pid <= MAX_PID:
        return None
    if not isinstance(host, str) or not 0 < len(host) <= MAX_TEXT:
        return None
    if type(since) is not int or not 0 <= since < 2**63:
        since = None
    return LockInfo(pid, host, _text(data.get("task")), _text(data.get("started")), since)


def process_start(pid: int) -> int | None:
    """When `pid` started (clock ticks after boot, /proc/PID/stat field 22), or None if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stream:
            fields = stream.read(4096).rsplit(b")", 1)[1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, owned by someone else
        return True
    return True


def still_running(info: LockInfo) -> bool:
    """Whether the run a record names may still run: another host cannot be checked (so yes);
    here, its pid must exist and, when recorded, have the same start time."""
    if info.host != socket.gethostname():
        return True
    if not _alive(info.pid):
        return False
    return info.since is None or process_start(info.pid) in (None, info.since)


def _try_flock(fd: int) -> bool:
    """False only when another open file holds the flock; True if we hold it (or flock is unsupported)."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        return error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)
    return True


def _read(fd: int) -> bytes:
    return os.pread(fd, MAX_LOCK_BYTES + 1, 0)


def _same_file(fd: int, path: Path) -> bool:
    """The open lock is still the file at `path` (its previous holder may have removed it)."""
    try:
        here, there = os.fstat(fd), path.lstat()
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _busy(output: Path, path: Path, info: LockInfo | None) -> InputError:
    who = info.describe() if info else "another process (its lock is still being written)"
    hint = f"Wait for it to end or choose another output folder (lock file: {path})."
    if info and info.host != socket.gethostname():
        hint += " If that run has ended, delete the lock file."
    return InputError(f"Another run is writing to '{output}' ({who}).", hint=hint)


def _open(path: Path) -> tuple[int, bool]:
    """(descriptor, whether the file was already there); a symlink at the lock's place is refused."""
    flags = os.O_RDWR | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    for _attempt in range(20):
        try:
            return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644), False
        except FileExistsError:
            pass
        try:
            fd = os.open(path, flags | os.O_NONBLOCK)  # a FIFO at the lock's place must not wait for a writer
        except FileNotFoundError:
            continue  # removed between the two calls: try again
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise InputError(f"The lock file '{path}' is not a regular file (a pipe, a device or a folder).",
                             hint="Remove it or choose another output folder.")
        return fd, True
    raise InputError(f"The lock file '{path}' keeps appearing and disappearing.", hint="Try again.")


def acquire(output: Path, path: Path, task: str) -> tuple[int, str]:
    """(the held lock's descriptor, a note if a stale lock was taken over); InputError if busy."""
    me = LockInfo(os.getpid(), socket.gethostname(), task, time.strftime("%Y-%m-%d %H:%M:%S"),
                  process_start(os.getpid()))
    for _attempt in range(20):
        try:
            fd, existed = _open(path)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise InputError(f"The lock file '{path}' is a symbolic link; it is never followed.",
                                 hint="Remove it or choose another output folder.") from None
            raise InputError(f"The lock file '{path}' cannot be created: {error.strerror or error}.") from None
        if not _try_flock(fd):
            info = None
            for _wait in range(10):  # its holder may be between creating and writing it
                info = parse_lock(_read(fd))
                if info is not None:
                    break
                time.sleep(0.02)
            os.close(fd)
            raise _busy(output, path, info)
        if not _same_file(fd, path):
            os.close(fd)
            continue
        raw = _read(fd)
        info = parse_lock(raw)
        if info is not None and still_running(info):  # e.g. a lock from a version without the flock
            os.close(fd)
            raise _busy(output, path, info)
        note = ""
        if existed:
            why = (f"its {info.describe()} is gone" if info is not None else
                   "it was empty" if not raw else "it could not be read")
            note = f"A stale lock on '{output}' was taken over ({why})."
        try:
            os.ftruncate(fd, 0)
            data = json.dumps(asdict(me)).encode("utf-8")
            if os.pwrite(fd, data, 0) != len(data):
                raise OSError(errno.ENOSPC, "short write")
        except OSError as error:
            path.unlink(missing_ok=True)
            os.close(fd)
            if error.errno in (errno.ENOSPC, errno.EDQUOT):
                raise DeviceError(f"The disk is full: the lock file '{path}' cannot be written.",
                                  hint="Free some space and try again.") from None
            raise InputError(f"The lock file '{path}' cannot be written: {error.strerror or error}.") from None
        return fd, note
    raise InputError(f"The lock on '{output}' could not be taken.", hint="Try again.")


def release(fd: int, path: Path) -> None:
    """Remove the lock file (if it is still ours) while holding its flock, then let go."""
    with contextlib.suppress(OSError):
        if _same_file(fd, path):
            path.unlink()
    with contextlib.suppress(OSError):
        os.close(fd)


class HeldLock:
    """A held run lock; `note` says when it replaced a stale one."""

    def __init__(self, path: Path, note: str) -> None:
        self.path = path
        self.note = note


@contextlib.contextmanager
def run_lock(output: Path, path: Path, task: str) -> Iterator[HeldLock]:
    """`path` locked for the length of the run; a second run on the same output is refused,
    naming the first. A lock no running process holds is taken over (see the module docstring)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, note = acquire(output, path, task)
    try:
        yield HeldLock(path, note)
    finally:
        release(fd, path)
