"""JSON values both ways: numbers read from JSON written by a run (events, log history), where a
bool, NaN or text is no number; and `dumps`, the one writer of every --json printer and JSON file,
which never writes NaN or Infinity (invalid JSON) but null, with a note saying where."""

from __future__ import annotations

import math
from typing import Any


def finite_number(value: Any) -> float | None:
    """The value as a finite float, or None (JSON's true is not 1, and NaN/inf are not points)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def text_number(value: Any) -> float | None:
    """A table cell's text as a finite float ("3.5"), or None ("", "x", "nan")."""
    try:
        return finite_number(float(str(value).strip()))
    except ValueError:
        return None


def step_number(value: Any) -> int | None:
    """The value as a training step (a non-negative int), or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


# -- writing: one JSON writer for every --json printer and every JSON file we write ----------------
NOTES_KEY = "notes"


def _where(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def finite_json(value: Any) -> tuple[Any, list[str]]:
    """`value` with every NaN and infinity replaced by None (JSON has no such numbers), and where each
    was ("metrics.eval_loss"); tuples become lists, keys stay as json would write them."""
    found: list[str] = []

    def clean(item: Any, path: str) -> Any:
        if isinstance(item, float) and not math.isfinite(item):
            found.append(f"{path or 'the value'} was {item}")
            return None
        if isinstance(item, dict):
            return {key: clean(child, _where(path, key)) for key, child in item.items()}
        if isinstance(item, list | tuple):
            return [clean(child, f"{path}[{i}]") for i, child in enumerate(item)]
        return item

    return clean(value, ""), found


def dumps(value: Any, indent: int | None = None, default: Any = None) -> str:
    """Valid JSON (allow_nan=False) of `value`: a non-finite number becomes null, and a top-level
    object gets a note under "notes" saying which were (a list or a scalar gets the nulls alone)."""
    import json

    try:  # the common case at C speed: nothing to clean
        return json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False, default=default)
    except ValueError:
        pass
    if default is not None:  # objects json cannot write (paths, dates) turned into what it can first
        value = json.loads(json.dumps(value, default=default, allow_nan=True))
    cleaned, found = finite_json(value)
    if found and isinstance(cleaned, dict):
        notes = cleaned.get(NOTES_KEY)
        note = "not a finite number, written as null: " + "; ".join(found[:20]) + (
            f" (and {len(found) - 20} more)" if len(found) > 20 else "")
        cleaned[NOTES_KEY] = [*notes, note] if isinstance(notes, list) else [note]
    return json.dumps(cleaned, ensure_ascii=False, indent=indent, allow_nan=False)
