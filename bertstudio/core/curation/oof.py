"""The out-of-fold probabilities file (`oof.csv`): one row per training row, written by `train --cv`
and read by `label-issues`. Columns: `row` (0-based data row), `given` (its label; `a|b` for
multi-label), then one probability column per class. Reading checks it against the data file, so
probabilities are never matched to the wrong rows."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bertstudio.core.datafiles import read_table
from bertstudio.core.errors import InputError

FIXED = ("row", "given")
SEPARATOR = "|"


@dataclass(frozen=True)
class OutOfFold:
    """Every row's probabilities (rows, classes) with the label it was given."""

    given: tuple[str, ...]
    classes: tuple[str, ...]
    probabilities: np.ndarray


def write_oof(path: Path, given: Sequence[str], classes: Sequence[str], probabilities: np.ndarray) -> None:
    """Written beside and renamed into place (never half a file)."""
    from bertstudio.core.suites.fix import write_atomically

    records = [[str(i), label, *(f"{p:.6g}" for p in row)]
               for i, (label, row) in enumerate(zip(given, probabilities, strict=True))]
    write_atomically(path, [*FIXED, *classes], records)


def read_oof(path: str | Path) -> OutOfFold:
    """The file's rows in `row` order; a missing row, a duplicate, or a probability that is not a
    number in 0..1 is one clear error naming its line."""
    path = Path(path)
    header, table = read_table(path, what="probabilities file")
    if len(header) < 4 or tuple(header[:2]) != FIXED:
        raise InputError(f"{path.name} is not an out-of-fold probabilities file: it needs the columns row, given "
                         "and one per class (at least two).", hint="Use the oof.csv that `train --cv` wrote.")
    classes = tuple(header[2:])
    found: dict[int, tuple[str, list[float]]] = {}
    for line, record, problem in table:
        if record is None:
            raise InputError(f"{path.name} line {line}: {problem}.")
        row = _row_number(path, line, record.get("row"))
        if row in found:
            raise InputError(f"{path.name} line {line}: row {row} appears twice.")
        values = [_probability(path, line, record.get(name)) for name in classes]
        found[row] = (str(record.get("given") or "").strip(), values)
    if sorted(found) != list(range(len(found))):
        missing = next(i for i in range(len(found)) if i not in found)
        raise InputError(f"{path.name} has no row {missing}: its rows must be 0 to {len(found) - 1}.")
    given = tuple(found[i][0] for i in range(len(found)))
    probabilities = np.asarray([found[i][1] for i in range(len(found))], dtype=np.float64)
    return OutOfFold(given, classes, probabilities.reshape(len(found), len(classes)))


def _row_number(path: Path, line: int, value: object) -> int:
    try:
        row = int(str(value).strip())
    except ValueError:
        raise InputError(f"{path.name} line {line}: row '{value}' is not a whole number.") from None
    if row < 0:
        raise InputError(f"{path.name} line {line}: row {row} is negative.")
    return row


def _probability(path: Path, line: int, value: object) -> float:
    try:
        number = float(str(value).strip())
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise InputError(f"{path.name} line {line}: '{value}' is not a probability between 0 and 1.")
    return number


def check_matches(oof: OutOfFold, given: Sequence[str], data_name: str, oof_name: str) -> None:
    """The OOF file was made from this data: as many rows, the same label on each, every class known."""
    if len(oof.given) != len(given):
        raise InputError(f"{oof_name} has {len(oof.given)} rows but {data_name} has {len(given)}: it was made "
                         "from another file.", hint="Run `train --cv` on this file to make its probabilities.")
    for row, (theirs, ours) in enumerate(zip(oof.given, given, strict=True)):
        if theirs != ours:
            raise InputError(f"Row {row} is labelled '{ours}' in {data_name} but '{theirs}' in {oof_name}: "
                             "the probabilities were made from another version of the file.",
                             hint="Run `train --cv` on this file again.")
    unknown = sorted({name for label in given for name in label.split(SEPARATOR) if name} - set(oof.classes))
    if unknown:
        raise InputError(f"{oof_name} has no probability column for the label '{unknown[0]}'.")
