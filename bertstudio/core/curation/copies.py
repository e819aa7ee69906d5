"""Corrected and extended copies of a user's training file, written beside it and never over it:
`reviews-corrected.csv` (rows relabelled or dropped after a label-issues review), `reviews-labelled.csv`
(newly labelled pool rows appended); `-2`, `-3`… when that name is taken. Every column of the
original is kept; the copy is CSV whatever the original was (the readers take it as they took that)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from bertstudio.core.errors import InputError

MAX_TRIES = 10_000


def free_name(path: str | Path, word: str) -> Path:
    """`<stem>-<word>.csv` beside `path`, or the first of `-2`, `-3`… that does not exist yet."""
    path = Path(path)
    for number in range(1, MAX_TRIES):
        tail = f"-{word}" if number == 1 else f"-{word}-{number}"
        candidate = path.with_name(f"{path.stem}{tail}.csv")
        if not candidate.exists() and not candidate.is_symlink():
            return candidate
    raise InputError(f"No free name for a copy of {path.name} in {path.parent}.", hint="Tidy up the old copies.")


def _table(path: Path) -> tuple[list[str], list[dict[str, object]]]:
    """The file's header and data rows (a malformed row was refused when it was read for training)."""
    from bertstudio.core.datafiles import read_table

    header, table = read_table(path)
    rows = [record for _line, record, _problem in table if record is not None]
    if len(rows) != len(table):
        raise InputError(f"{path.name} has malformed rows; fix them before writing a corrected copy.")
    return header, rows


def _write(path: Path, header: Sequence[str], rows: Sequence[Mapping[str, object]]) -> Path:
    from bertstudio.core.suites.fix import write_atomically

    write_atomically(path, list(header), [["" if row.get(h) is None else str(row.get(h)) for h in header]
                                          for row in rows])
    return path


def corrected_copy(path: str | Path, label_column: str, relabel: Mapping[int, str],
                   drop: Sequence[int] = ()) -> Path:
    """A copy with rows (0-based data rows) relabelled and dropped; returns where it went."""
    source = Path(path)
    header, rows = _table(source)
    if label_column not in header:
        raise InputError(f"{source.name} has no column '{label_column}'.")
    for row in [*relabel, *drop]:
        if not 0 <= row < len(rows):
            raise InputError(f"Row {row} is not in {source.name} (it has {len(rows)} rows).")
    dropped = set(drop)
    kept = [{**record, label_column: relabel.get(i, record.get(label_column))}
            for i, record in enumerate(rows) if i not in dropped]
    return _write(free_name(source, "corrected"), header, kept)


def appended_copy(path: str | Path, text_column: str, label_column: str,
                  labelled: Sequence[tuple[str, str]]) -> Path:
    """A copy of the training file with (text, label) rows added at the end; other columns left empty."""
    source = Path(path)
    header, rows = _table(source)
    for column in (text_column, label_column):
        if column not in header:
            raise InputError(f"{source.name} has no column '{column}'.")
    if any(not text.strip() or not label.strip() for text, label in labelled):
        raise InputError("Every new row needs a text and a label.", hint="Label each row or leave it out.")
    added = [{text_column: text, label_column: label} for text, label in labelled]
    return _write(free_name(source, "labelled"), header, [*rows, *added])
