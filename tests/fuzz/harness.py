"""One fuzzed command line, run in this process: under a time limit and an address-space limit, with
the input tree snapshotted before and after, judged by the CLI's contract (exit 0 or 1, one `error:`
line, never a traceback, nothing changed outside the declared outputs)."""

from __future__ import annotations

import contextlib
import faulthandler
import hashlib
import os
import resource
import signal
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# Seconds one case may take before it counts as a hang (tiny models: a case takes well under a second
# to a few seconds; a training run of a few steps stays far below).
CASE_SECONDS = float(os.environ.get("BERTSTUDIO_FUZZ_CASE_SECONDS", "120"))
# Address space a case may add to the process's: a tiny model needs a few hundred MiB.
CASE_MEMORY = 3 << 30
# How many generated cases each test runs: small in `./dev test`, large in `./dev fuzz`.
EXAMPLES_ENV = "BERTSTUDIO_FUZZ_EXAMPLES"


def examples(default: int) -> int:
    chosen = os.environ.get(EXAMPLES_ENV)
    return int(chosen) if chosen else default


class CaseTimeout(BaseException):  # noqa: N818 - a BaseException so no `except Exception` can swallow it
    """Raised in the main thread when a case runs past CASE_SECONDS."""


Snapshot = dict[str, tuple[str, int, str]]


def _fingerprint(path: Path, info: os.stat_result) -> tuple[str, int, str]:
    if stat.S_ISLNK(info.st_mode):
        return "link", 0, os.readlink(path)
    if stat.S_ISDIR(info.st_mode):
        return "dir", 0, ""
    if not stat.S_ISREG(info.st_mode):
        return "special", 0, str(stat.S_IFMT(info.st_mode))
    digest = hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
    return "file", info.st_size, f"{info.st_mtime_ns}:{digest}"


def snapshot(root: Path) -> Snapshot:
    """Type, size, mtime and hash of everything under root (links not followed)."""
    found: Snapshot = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            found[str(path)] = _fingerprint(path, path.lstat())
    return found


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    added = [f"created {p}" for p in after.keys() - before.keys()]
    removed = [f"removed {p}" for p in before.keys() - after.keys()]
    changed = [f"changed {p}" for p in before.keys() & after.keys() if before[p] != after[p]]
    return sorted(added + removed + changed)


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """CaseTimeout in the main thread after `seconds`; a process-wide dump-and-exit far later in case
    the main thread is stuck where no signal handler runs (a C call that never returns)."""

    def expired(signum: int, frame: object) -> None:
        raise CaseTimeout(f"ran past {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    faulthandler.dump_traceback_later(seconds * 4, exit=True)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGALRM, previous)


def _address_space() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


@contextlib.contextmanager
def memory_limit(extra: int) -> Iterator[None]:
    """RLIMIT_AS at what this process maps now plus `extra`: an allocation past it is a MemoryError
    (which the CLI reports as `error: out of memory`, a finding here) instead of the machine swapping."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _address_space() + extra
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@dataclass
class Outcome:
    argv: list[str]
    code: int | str  # an exit code, or "hang"
    out: str
    err: str


def run_case(argv: list[str], capfd: pytest.CaptureFixture[str], cwd: Path) -> Outcome:
    """`bertstudio ARGV` in this process, in `cwd`, bounded in time and memory."""
    from bertstudio.cli import main

    capfd.readouterr()
    here = os.getcwd()
    os.chdir(cwd)
    code: int | str
    try:
        with memory_limit(CASE_MEMORY), time_limit(CASE_SECONDS):
            code = main(list(argv))
    except SystemExit as exit_:  # argparse: a usage error (2) or --help (0)
        code = exit_.code if isinstance(exit_.code, int) else 2
    except CaseTimeout:
        code = "hang"
    finally:
        os.chdir(here)
    out, err = capfd.readouterr()
    return Outcome(list(argv), code, out, err)


def _usage_error(outcome: Outcome) -> bool:
    lines = outcome.err.strip().splitlines()
    return outcome.code == 2 and bool(lines) and lines[0].startswith("usage: ") and ": error: " in lines[-1]


def _strict_json(text: str) -> bool:
    """One JSON document, or one per line (train's events), without NaN or Infinity (which json.loads
    takes but JSON does not allow)."""
    import json

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    def valid(document: str) -> bool:
        try:
            json.loads(document, parse_constant=refuse)
        except ValueError:
            return False
        return True

    lines = [line for line in text.splitlines() if line.strip()]
    return valid(text) or (len(lines) > 1 and all(valid(line) for line in lines))


def problems(outcome: Outcome) -> list[str]:
    """What is wrong with how the command ended, by the CLI's contract (empty when nothing)."""
    found = []
    if outcome.code == "hang":
        found.append(f"hang: no end within {CASE_SECONDS:.0f} s")
    elif outcome.code not in (0, 1) and not _usage_error(outcome):
        found.append(f"exit {outcome.code}")
    text = outcome.out + outcome.err
    if "Traceback (most recent call last)" in text:
        found.append("traceback")
    if "internal error:" in outcome.err:
        found.append("internal error")
    if "out of memory" in outcome.err:
        found.append("out of memory")
    if outcome.code == 0 and "--json" in outcome.argv and not _strict_json(outcome.out):
        found.append("invalid JSON on stdout")
    errors = [line for line in outcome.err.splitlines() if line.startswith("error:")]
    if outcome.code == 1 and len(errors) != 1:
        found.append(f"{len(errors)} error lines")
    return found


def describe(outcome: Outcome, found: list[str]) -> str:
    return (f"bertstudio {' '.join(repr(a) for a in outcome.argv)}\n  -> {outcome.code}: {'; '.join(found)}\n"
            f"stderr (last 2000 chars):\n{outcome.err[-2000:]}")


def flush() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
