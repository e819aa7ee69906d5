"""Notes: one shape for everything a result wants a person to know besides the numbers.

Truncation, a missing head, a label hint, a strategy that cannot run: every task used to
invent its own field for these. Now a result carries `notes`; the window shows them in one
place, the CLI prints them to stderr one way, JSON carries them in one field.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Level = Literal["info", "warning", "error"]


@dataclass(frozen=True)
class Note:
    level: Level
    text: str
    detail: str = ""  # one click away in the window; never printed by the CLI

    def to_json(self) -> dict[str, str]:
        data = {"level": self.level, "text": self.text}
        if self.detail:
            data["detail"] = self.detail
        return data

    def prefixed(self, prefix: str) -> Note:
        return Note(self.level, f"{prefix}{self.text}", self.detail)


def info(text: str, detail: str = "") -> Note:
    return Note("info", text, detail)


def warning(text: str, detail: str = "") -> Note:
    return Note("warning", text, detail)


def unique(notes: Iterable[Note]) -> tuple[Note, ...]:
    """Each text once, in first-seen order: the same warning from two places is shown once."""
    seen: dict[str, Note] = {}
    for note in notes:
        seen.setdefault(note.text, note)
    return tuple(seen.values())
