"""Findings of the fuzz harness not fixed yet, each named and matching only its cases, so the
harness stays strict about everything else. Empty: every finding so far is fixed (issue 40's
were: check --failures on a FIFO or an existing file, runs with Infinity, '{x:{x}}' templates, a
FIFO as a training output or as a lock). An entry is removed with its fix (reader entries are
strict xfails: they fail once fixed)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Known:
    commands: tuple[str, ...]
    problem: str  # the start of the harness's problem line
    when: Callable[[list[str], str], bool]  # (argv, stderr) -> this case is that finding
    finding: str


KNOWN: tuple[Known, ...] = ()

# (reader, special file) of tests/fuzz/test_readers_fuzz.py that still fail: strict xfails.
KNOWN_READERS: dict[tuple[str, str], str] = {}


def known_hang(command: str, argv: list[str]) -> bool:
    """A case that would hang for a known reason: not run at all (each would cost the whole time limit)."""
    return any(command in k.commands and k.problem == "hang:" and k.when(argv, "") for k in KNOWN)


def known_finding(command: str, argv: list[str], problem: str, stderr: str) -> bool:
    return any(command in k.commands and problem.startswith(k.problem) and k.when(argv, stderr) for k in KNOWN)
