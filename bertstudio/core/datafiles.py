"""The validating readers of the data files a user gives: tables (CSV/TSV/JSONL), JSON
documents and plain text lines, each bounded and each failure a clear InputError.

Everything starts at `core.files` (a FIFO, a device, a folder or a too-big file is refused
before a byte is read). On top of that: a CSV field may be up to MAX_FIELD_CHARS long (csv's
default of 131,072 characters made long documents unusable), a file at most MAX_ROWS rows,
a JSON value at most MAX_JSON_DEPTH levels deep (Python's json recurses: 100,000 levels
were a RecursionError). Task readers (training, evaluation, batch classification) build on
these, so each of those answers is written once.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bertstudio.core.errors import InputError
from bertstudio.core.files import read_text
from bertstudio.core.limits import MAX_FIELD_CHARS, MAX_JSON_DEPTH, MAX_ROWS

if TYPE_CHECKING:
    from bertstudio.core.progress import TaskControl

JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json"})
TSV_SUFFIXES = frozenset({".tsv", ".tab"})
# (line, the row as column -> value or None when malformed, the problem when malformed)
TableRow = tuple[int, dict[str, Any] | None, str]
CHECK_EVERY = 4096  # rows between cancel checks: reading 200,000 rows takes seconds


def tick(control: TaskControl | None, count: int) -> None:
    """Raise TaskCancelled every CHECK_EVERY rows once a stop was asked for."""
    if control is not None and count % CHECK_EVERY == 0:
        control.check()


def too_many_rows(path: Path, limit: int = MAX_ROWS) -> InputError:
    return InputError(f"{path.name} has more than {limit:,} rows; at most {limit:,} can be read at once.",
                      hint="Split it into smaller files.")


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if level > MAX_JSON_DEPTH:
            break
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are all different: json keeps the last of two equal keys silently."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return found


def parse_json(text: str, where: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`text` as JSON nested at most `max_depth` levels, each object's keys different; an InputError
    naming `where` otherwise."""
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as error:
        raise InputError(f"{where} has the key '{error.key[:80]}' twice in one object; only one can be meant.",
                         hint="Remove or rename one of them.") from None
    except json.JSONDecodeError as error:
        raise InputError(f"{where} is not valid JSON (line {error.lineno}: {error.msg}).") from None
    except ValueError:  # a number of more than 4,300 digits (Python's bound on int parsing)
        raise InputError(f"{where} holds a number too long to read.") from None
    except RecursionError:
        value = None
        deep = True
    else:  # the count of "[" and "{" bounds the depth: most rows skip the walk
        deep = text.count("[") + text.count("{") > max_depth and json_depth(value) > max_depth
    if deep:
        raise InputError(f"{where} is nested more than {max_depth} levels deep.",
                         hint="Data files hold records, not deeply nested values.")
    return value


def csv_records(text: str, delimiter: str, path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line, fields) of every record; a field over MAX_FIELD_CHARS or broken quoting is an
    InputError with the line. Lines are physical lines, so a quoted field may span several."""
    csv.field_size_limit(MAX_FIELD_CHARS)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    start = 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            problem = (f"a field is longer than {MAX_FIELD_CHARS:,} characters" if "field limit" in str(error)
                       else str(error))
            raise InputError(f"{path.name} cannot be read as a table: line {reader.line_num}: {problem}.",
                             hint="Check the quoting of that line (or split a very long text).") from None
        yield start, fields
        start = reader.line_num + 1


def delimiter_of(path: Path, text: str) -> str:
    """Tab for .tsv/.tab, comma for .csv, else sniffed from the start of the text (comma if unsure)."""
    suffix = path.suffix.lower()
    if suffix in TSV_SUFFIXES:
        return "\t"
    if suffix == ".csv":
        return ","
    try:
        return csv.Sniffer().sniff(text[:4096], delimiters=",\t;").delimiter
    except csv.Error:
        return ","


def read_jsonl(path: Path, text: str, max_rows: int = MAX_ROWS, control: TaskControl | None = None
               ) -> tuple[list[str], list[TableRow]]:
    """Header (every key, first seen first) and rows of a JSON-lines file; a bad line is a row problem."""
    header: dict[str, None] = {}
    rows: list[TableRow] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if len(rows) >= max_rows:
            raise too_many_rows(path, max_rows)
        tick(control, number)
        try:
            value = parse_json(line, "the line")
        except InputError as error:
            rows.append((number, None, error.message.removeprefix("the line is ").rstrip(".")))
            continue
        if not isinstance(value, dict):
            rows.append((number, None, "not a JSON object"))
            continue
        header.update(dict.fromkeys(str(k) for k in value))
        rows.append((number, {str(k): v for k, v in value.items()}, ""))
    return list(header), rows


def read_table(path: str | Path, what: str = "data file", max_rows: int = MAX_ROWS,
               control: TaskControl | None = None) -> tuple[list[str], list[TableRow]]:
    """Header and (line, row or None, problem) for a CSV, TSV or JSONL file. A row with the wrong
    number of fields is a problem of its line; blank rows are skipped."""
    path = Path(path)
    text = read_text(path, what)
    if path.suffix.lower() in JSONL_SUFFIXES:
        return read_jsonl(path, text, max_rows, control)
    header: list[str] = []
    rows: list[TableRow] = []
    for number, fields in csv_records(text, delimiter_of(path, text), path):
        if not header:
            header = [h.strip() for h in fields]
            if not any(header):
                raise InputError(f"{path.name} has no header row.", hint="The first line must name the columns.")
            continue
        if not fields or not any(f.strip() for f in fields):
            continue
        if len(rows) >= max_rows:
            raise too_many_rows(path, max_rows)
        tick(control, len(rows))
        if len(fields) != len(header):
            rows.append((number, None, f"{len(fields)} fields where the header has {len(header)}"))
            continue
        rows.append((number, dict(zip(header, fields, strict=True)), ""))
    return header, rows


def read_lines(path: str | Path, what: str = "text file", max_rows: int = MAX_ROWS,
               control: TaskControl | None = None) -> list[tuple[int, str]]:
    """(line number, stripped text) of every non-blank line of a UTF-8 text file."""
    path = Path(path)
    found: list[tuple[int, str]] = []
    for number, line in enumerate(read_text(path, what).splitlines(), start=1):
        text = line.strip()
        if text:
            if len(found) >= max_rows:
                raise too_many_rows(path, max_rows)
            tick(control, len(found))
            found.append((number, text))
    return found


def first_line_header(path: str | Path, max_bytes: int = 1 << 16) -> list[str]:
    """The column names of a table file from its first non-blank line, reading at most `max_bytes`
    (cheap and safe on the GUI thread: a FIFO, a device or a huge one-line file gives [])."""
    from bertstudio.core.files import regular_file

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in {".csv", ".tsv", ".tab", ".jsonl", ".ndjson"}:
        return []
    try:
        checked = regular_file(path)
        with checked.open("rb") as handle:
            head = handle.read(max_bytes).decode("utf-8-sig", errors="replace")
    except (InputError, OSError):
        return []
    first = next((line for line in head.splitlines() if line.strip()), "")
    if suffix in {".jsonl", ".ndjson"}:
        try:
            value = parse_json(first, "the first line")
        except InputError:
            return []
        return [str(k) for k in value] if isinstance(value, dict) else []
    delimiter = "\t" if suffix in TSV_SUFFIXES else ","
    csv.field_size_limit(MAX_FIELD_CHARS)
    try:
        return [h.strip() for h in next(csv.reader([first], delimiter=delimiter), [])]
    except csv.Error:
        return []
