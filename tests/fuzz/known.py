"""Findings of the fuzz harness left to another branch (issue 40's h-borders: the output policy,
suite template bounds, JSON writers, search metric validation). Each entry names the finding; the
lead removes an entry once that branch is merged and the case passes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Known:
    command: str
    problem: str  # the start of the harness's problem line
    when: Callable[[list[str], str], bool]  # (argv, stderr) -> this case is that finding
    finding: str


KNOWN: tuple[Known, ...] = ()


def known_finding(command: str, argv: list[str], problem: str, stderr: str) -> bool:
    return any(k.command == command and problem.startswith(k.problem) and k.when(argv, stderr) for k in KNOWN)
