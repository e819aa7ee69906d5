"""The workspace file's one reader: its shape, types and bounds, checked before anything is applied.

A workspace comes from disk (ours, last session's, someone else's, a hand edit), so it is a
border: a wrong field must never reach a widget half-way through a restore. `read` refuses
what is not a workspace at all (not a regular file, too big, not UTF-8, not JSON, nested too
deep, another format, a newer version). `validate` keeps every field of the right type and
within bounds and drops the others, each named in `problems`; the caller restores what is
valid and shows the problems as one message.

A tab's own inputs (its `view`) are checked against an example of what that tab writes
today (`views`: the window passes every tab's current `state()`), so the schema of each tab
is the shape of its own output and no table here names a task.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.datafiles import parse_json
from bertstudio.core.errors import InputError
from bertstudio.core.files import read_text
from bertstudio.core.limits import check_count

FORMAT = "bertstudio-workspace"
VERSION = 1
MAX_WORKSPACE_BYTES = 16 * 2**20  # pasted texts and lines included; a real one is a few KiB
MAX_QT_INT = 2**31 - 1  # what a spin box (a C int) can hold: larger values overflow in Qt
MAX_PIXELS = 100_000  # a splitter size
MAX_LIST = 10_000  # items in one list of a view (heads shown, selected heads…)
MAX_SHOWN_PROBLEMS = 8
MAX_PINS = 20  # kept inputs of a task tab (the pinned one and its edits)
# Counts whose name says what they are, bounded tighter than a C int (never tighter than a tab's widget).
COUNTS: dict[str, tuple[int, int]] = {"top_k": (1, 1000)}

_DROP = object()  # a field left out
Problems = list[str]
Check = Callable[[Any, str, Problems], Any]


@dataclass(frozen=True)
class Checked:
    """The valid parts of a workspace (its own shape, wrong fields left out) and what was wrong."""

    data: dict[str, Any]
    problems: tuple[str, ...] = ()

    def message(self) -> str:
        """All problems in one line: the first few named, the rest counted."""
        if not self.problems:
            return ""
        shown = "; ".join(self.problems[:MAX_SHOWN_PROBLEMS])
        more = len(self.problems) - MAX_SHOWN_PROBLEMS
        rest = f"; and {more} more" if more > 0 else ""
        count = len(self.problems)
        return (f"The workspace had {count} wrong field{'s' if count > 1 else ''}, left out "
                f"(everything else was restored): {shown}{rest}.")


# -- reading ---------------------------------------------------------------------------------------
def read(path: str | Path) -> dict[str, Any]:
    """A workspace file as JSON, refused with a clear message if it is not one; not yet validated."""
    text = read_text(path, "workspace file", MAX_WORKSPACE_BYTES)
    return parse(text, str(path))


def parse(text: str, where: str = "the workspace") -> dict[str, Any]:
    """JSON nested at most MAX_JSON_DEPTH levels (the data files' reader), then the format and version."""
    try:
        data = parse_json(text, where)
    except InputError as error:  # not JSON, a 4,300-digit number, 100,000 nested '['
        raise InputError(error.message, hint="Choose a file saved with Save workspace…") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"{where} is not a BERT Studio workspace.", hint="Choose a file saved with Save workspace…")
    version = data.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
        raise InputError(f"{where} was saved by a newer BERT Studio (workspace version {version:,}).",
                         hint="Update BERT Studio to open it.")
    return data


# -- checks: each returns the clean value, or _DROP after naming the problem -------------------------
def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a text", bool: "true/false", type(None): "null"}
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)


def _wrong_kind(value: Any, kind: str, where: str, problems: Problems, wanted: str = "") -> bool:
    """Whether `value` is not of the JSON `kind` (_kind's words: bool is never a number); if not,
    the problem is named once, the same way for every check."""
    if _kind(value) == kind:
        return False
    problems.append(f"{where} must be {wanted or kind} (got {_kind(value)})")
    return True


def _too_long(value: str | list, most: int, where: str, problems: Problems, unit: str) -> bool:
    """Whether a text or a list has more than `most` characters or items (named if so)."""
    if len(value) <= most:
        return False
    problems.append(f"{where} has {len(value):,} {unit}; at most {most:,} are allowed")
    return True


def text(max_chars: int = MAX_WORKSPACE_BYTES) -> Check:
    def check(value: Any, where: str, problems: Problems) -> Any:
        if _wrong_kind(value, "a text", where, problems) or _too_long(value, max_chars, where, problems, "characters"):
            return _DROP
        return value
    return check


def flag() -> Check:
    def check(value: Any, where: str, problems: Problems) -> Any:
        if _wrong_kind(value, "true/false", where, problems, "true or false"):
            return _DROP
        return value
    return check


def count(low: int = -MAX_QT_INT - 1, high: int = MAX_QT_INT) -> Check:
    def check(value: Any, where: str, problems: Problems) -> Any:
        if not isinstance(value, int) or isinstance(value, bool):  # "12" is a text here: it was never written so
            problems.append(f"{where} must be a whole number (got {_kind(value)})")
            return _DROP
        try:
            return check_count(value, where, low, high)
        except InputError as error:
            problems.append(error.message.rstrip("."))
            return _DROP
    return check


def real() -> Check:
    def check(value: Any, where: str, problems: Problems) -> Any:
        if _wrong_kind(value, "a number", where, problems):
            return _DROP
        number = float(value) if abs(value) < 1e308 else math.inf
        if not math.isfinite(number):
            problems.append(f"{where} must be a finite number")
            return _DROP
        return value
    return check


def list_of(item: Check, max_items: int = MAX_LIST) -> Check:
    """A list whose items all pass `item`; one wrong item drops the list (half a list means nothing)."""
    def check(value: Any, where: str, problems: Problems) -> Any:
        if _wrong_kind(value, "a list", where, problems) or _too_long(value, max_items, where, problems, "items"):
            return _DROP
        found: Problems = []
        clean = [item(element, f"{where}[{index}]", found) for index, element in enumerate(value)]
        if found:
            problems.append(found[0])
            return _DROP
        return clean
    return check


def base64_text() -> Check:
    """The window's saved geometry and dock state (Qt's own bytes, base64)."""
    plain = text(1_000_000)

    def check(value: Any, where: str, problems: Problems) -> Any:
        value = plain(value, where, problems)
        if value is _DROP:
            return _DROP
        try:
            base64.b64decode(value.encode("ascii"), validate=True)
        except (UnicodeEncodeError, binascii.Error):
            problems.append(f"{where} is not the window layout BERT Studio saves (base64)")
            return _DROP
        return value
    return check


def obj(fields: Mapping[str, Check], other: Check | None = None, what: str = "field") -> Check:
    """An object: known fields checked, unknown ones checked by `other`, else dropped and named."""
    def check(value: Any, where: str, problems: Problems) -> Any:
        if _wrong_kind(value, "an object", where or "the workspace", problems):
            return _DROP
        clean = {}
        for key, element in value.items():
            path = f"{where}.{key}" if where else str(key)
            field = fields.get(key, other)
            if field is None:
                problems.append(f"{path}: unknown {what}")
                continue
            result = field(element, path, problems)
            if result is not _DROP:
                clean[key] = result
        return clean
    return check


def anything() -> Check:
    """A value the example cannot type (an empty list, a null): any JSON of plain values, bounded."""
    def check(value: Any, where: str, problems: Problems) -> Any:
        if isinstance(value, str | bool) or value is None:
            return value
        if isinstance(value, int | float):
            return real()(value, where, problems)
        if isinstance(value, list):
            return list_of(anything())(value, where, problems)
        return obj({}, anything())(value, where, problems)
    return check


def shape_of(example: Any, name: str = "") -> Check:
    """The check for values shaped like `example` (what a tab writes today)."""
    if isinstance(example, bool):
        return flag()
    if isinstance(example, int):
        return count(*COUNTS.get(name, (-MAX_QT_INT - 1, MAX_QT_INT)))
    if isinstance(example, float):
        return real()
    if isinstance(example, str):
        return text()
    if isinstance(example, dict):
        return obj({key: shape_of(value, key) for key, value in example.items()})
    if isinstance(example, list) and example:  # or null: an optional pair (a focused head) is null when unset
        items = list_of(shape_of(example[0], name))
        return lambda value, where, problems: None if value is None else items(value, where, problems)
    return anything()


# -- the whole file --------------------------------------------------------------------------------
SIZES = list_of(count(0, MAX_PIXELS), 16)


def tab_check(view: Check) -> Check:
    pins = list_of(obj({"label": text(100), "view": view}), MAX_PINS)  # pinned inputs: each a view of the tab
    return obj({"model": text(10_000), "compare": text(10_000), "heads_off": text(10_000), "loaded": text(10_000),
                "splitter": SIZES, "splitters": list_of(SIZES, 64), "view": view, "pins": pins,
                "pin": count(0, MAX_PINS - 1)})


def validate(data: Any, views: Mapping[str, Any] | None = None) -> Checked:
    """Every valid part of `data` in the workspace's shape, and what was left out.

    `views` maps each tab the window has to an example of its `state()`; a tab not in it is
    unknown. Without `views` (a headless check) any tab is accepted, its view as plain JSON.
    """
    problems: Problems = []
    if views is None:
        tabs = obj({}, tab_check(obj({}, anything())))
    else:
        tabs = obj({key: tab_check(shape_of(example)) for key, example in views.items()}, what="tab")
    version_check = count(0, VERSION)
    schema = obj({"format": text(100), "version": version_check, "window": obj({"geometry": base64_text(),
                                                                                  "state": base64_text()}),
                  "current": text(200), "tabs": tabs})
    clean = schema(data, "", problems)
    return Checked(clean if isinstance(clean, dict) else {}, tuple(problems))
