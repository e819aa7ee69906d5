"""Findings of the fuzz harness left to another branch (issue 40's h-borders: the output policy of
train/search/check --failures/export/runs, locks, suite template bounds, JSON writers, search metric
validation). Each entry names the finding and matches only its cases; the lead removes an entry once
that branch is merged and the cases pass (the reader entries are strict xfails: they then fail)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Known:
    commands: tuple[str, ...]
    problem: str  # the start of the harness's problem line
    when: Callable[[list[str], str], bool]  # (argv, stderr) -> this case is that finding
    finding: str


def _value(argv: list[str], flag: str) -> str | None:
    return next((argv[i + 1] for i in range(len(argv) - 1) if argv[i] == flag), None)


def _special(flag: str) -> Callable[[list[str], str], bool]:
    """`flag` names something that exists and is neither a folder nor a regular file nor a link (a FIFO)."""

    def special(argv: list[str], _stderr: str) -> bool:
        output = _value(argv, flag)
        try:
            mode = os.lstat(output).st_mode if output else 0
        except OSError:
            return False
        return bool(mode) and not stat.S_ISDIR(mode) and not stat.S_ISREG(mode) and not stat.S_ISLNK(mode)

    return special


_output_is_special = _special("--output")


def _existing_file(flag: str) -> Callable[[list[str], str], bool]:
    """`flag` names a regular file that was there before the case (one of the inputs)."""
    return lambda argv, _stderr: "/in/" in (_value(argv, flag) or "") and os.path.isfile(_value(argv, flag) or "")


def _said(words: str) -> Callable[[list[str], str], bool]:
    return lambda _argv, stderr: words in stderr


def _infinite_record(argv: list[str], _stderr: str) -> bool:
    return (_value(argv, "--runs-dir") or "").endswith("/in/runs")


KNOWN: tuple[Known, ...] = (
    Known(("check",), "hang:", _special("--failures"),
          "`check --failures FIFO` opens the FIFO for writing and waits for a reader for ever (no special-file "
          "check on --failures). (h-borders: output policy of check --failures)"),
    Known(("check",), "disk:", _existing_file("--failures"),
          "`check --failures FILE` replaces an existing file without asking (issue 40, severe 2). "
          "(h-borders: output policy of check --failures)"),
    Known(("runs",), "exit 2", _said("OverflowError: cannot convert float infinity"),
          "a run record with Infinity (duration_seconds) makes `runs` an internal error. (h-borders: JSON)"),
    Known(("runs",), "internal error", _said("OverflowError: cannot convert float infinity"),
          "the same case"),
    Known(("runs",), "invalid JSON", _infinite_record,
          "`runs --json` copies a record's Infinity into its output: not JSON. (h-borders: JSON writers)"),
    Known(("check",), "exit 2", _said("Invalid format specifier"),
          "a suite template slot with a format spec ('the {x:{x}}') is an internal error. (h-borders: templates)"),
    Known(("check",), "internal error", _said("Invalid format specifier"), "the same case"),
    Known(("train", "features train", "features lens"), "disk:", _output_is_special,
          "saving.check_output refuses a regular file as --output but not a FIFO, socket or device: the run "
          "moves it aside to <output>.old-PID and writes a folder there (as root, --output /dev/null would "
          "move /dev/null itself). Fix: refuse anything that exists and is not a folder. (h-borders: output policy)"),
    Known(("train", "features train", "features lens"), "hang:", _output_is_special,
          "the same case: training on while the FIFO was moved aside ran past the case's time limit"),
)

# (reader, special file) of tests/fuzz/test_readers_fuzz.py that still fail: strict xfails.
KNOWN_READERS: dict[tuple[str, str], str] = {}


def known_hang(command: str, argv: list[str]) -> bool:
    """A case that would hang for a known reason: not run at all (each would cost the whole time limit)."""
    return any(command in k.commands and k.problem == "hang:" and k.when(argv, "") for k in KNOWN)


def known_finding(command: str, argv: list[str], problem: str, stderr: str) -> bool:
    return any(command in k.commands and problem.startswith(k.problem) and k.when(argv, stderr) for k in KNOWN)
