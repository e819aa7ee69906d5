"""What behavioural suites (core/suites) need of multiple choice: a case's prompt and choices (an input
may be written [prompt, [choices]]), MFT's choice number, and failing cases as (prompt, choices, label)
rows of the table training reads ("Fine-tune on failures", `check --failures`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bertstudio.core.tasks.multiple_choice.train import read_choices
from bertstudio.core.tasks.spec import FixRow


def prompt_and_choices(case: tuple[str, ...]) -> tuple[str, list[str]]:
    """A case as Evaluate's choice rows hold it: (prompt, [choices])."""
    return (case[0], list(case[1:]))


def choice_item(value: Any) -> list[Any] | None:
    """An input's parts: a text, a list of texts, or [prompt, [choices]] (flattened); never an object by
    part names (every choice has the one name "choice")."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [value[0], *value[1]] if len(value) == 2 and isinstance(value[1], list) else value
    return None


def expected_choice(value: Any) -> str:
    """MFT's `expect`: the right choice's number."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return f"{value!r} is not a choice number (0 for the first choice)"
    return ""


def choice_in_case(case: tuple[str, ...], value: Any) -> str:
    """MFT's choice number against one case: it must name one of the case's choices."""
    choices = len(case) - 1
    if isinstance(value, int) and not 0 <= value < choices:
        return f"{value!r} is not a choice of an input with {choices} choices (0 to {choices - 1})"
    return ""


def meets_choice(value: Any, _shown: str, expect: Any) -> bool:
    return bool(int(value) == int(expect))


def choice_row(parts: tuple[str, ...], answer: Any) -> FixRow:
    return (parts, int(answer))


def choice_records(items: Sequence[tuple[str, Sequence[str], int]]) -> tuple[list[str], list[list[str]]]:
    """(header, records) of the choice table: prompt, choice0..choiceN (short rows padded), label."""
    most = max(len(choices) for _p, choices, _l in items)
    header = ["prompt", *(f"choice{i}" for i in range(most)), "label"]
    return header, [[p, *choices, *([""] * (most - len(choices))), str(label)] for p, choices, label in items]


def write_rows(path: Path, rows: Sequence[FixRow]) -> None:
    """The rows alone as the choice table (core/suites' writer imported here: suites are not read with
    the specs)."""
    from bertstudio.core.suites.fix import write_atomically

    header, records = choice_records([(parts[0], parts[1:], answer) for parts, answer in rows] or [("", [], 0)])
    write_atomically(path, header, records if rows else [])


def extend_data(data: Path, target: Path, rows: Sequence[FixRow]) -> None:
    """The user's table as training reads it (read_choices), then the rows, into `target`."""
    from bertstudio.core.suites.fix import write_atomically

    items = [(x.inputs[0], list(x.inputs[1]), int(x.gold)) for x in read_choices(str(data))]
    header, records = choice_records([*items, *((parts[0], list(parts[1:]), answer) for parts, answer in rows)])
    write_atomically(target, header, records)
