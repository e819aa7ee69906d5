"""Labelled files for evaluation: the shapes every task's reader returns (Example, Dataset) and
the pieces they share, with line-numbered errors as `train` gives.

Each task's reader lives in its package (core/tasks/<task>/evaluate.py, named by its spec's
EvaluateAdapter); `read_dataset` asks the spec. Table files are read by the training readers, so
a file that trains also evaluates and a bad row is reported the same way; every other column of
a table is kept per row, so metrics can be sliced by it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bertstudio.core.datafiles import read_table, tick
from bertstudio.core.errors import InputError
from bertstudio.core.files import regular_file
from bertstudio.core.progress import TaskControl

if TYPE_CHECKING:
    from bertstudio.core.training.data import RowIssue



@dataclass(frozen=True)
class EvalColumns:
    """Which columns hold what; None = detected from well-known names."""

    text: str | None = None  # classification text, NSP sentence A
    pair: str | None = None  # classification second text, NSP sentence B
    label: str | None = None  # classification label, NSP label, choice index
    question: str | None = None
    context: str | None = None
    answer: str | None = None
    prompt: str | None = None
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Example:
    """One labelled row. `inputs` and `gold` are task-shaped (see each reader)."""

    line: int  # where it starts in the file (1-based), for messages
    text: str  # what a person reads in tables and the projector's hover
    inputs: Any
    gold: Any
    fields: Mapping[str, str] = field(default_factory=dict)  # the row's other columns, for slices


@dataclass(frozen=True)
class Dataset:
    task: str  # spec key
    path: str
    examples: tuple[Example, ...]
    columns: tuple[str, ...] = ()  # the extra columns a user can slice by
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.examples)

    def limited(self, limit: int | None) -> Dataset:
        """The first `limit` rows (the CLI's --limit)."""
        if not limit or limit >= len(self.examples):
            return self
        if limit < 0:
            raise InputError(f"--limit must be positive, not {limit}.")
        return replace(self, examples=self.examples[:limit])


def pick_column(header: Sequence[str], given: str | None, names: Sequence[str], what: str, path: Path,
          avoid: Sequence[str | None] = ()) -> str:
    """The column the user named (checked) or the first well-known name in the header."""
    if given:
        if given not in header:
            raise InputError(f"{path.name} has no column '{given}'.", hint=f"Its columns: {', '.join(header)}.")
        return given
    lower = {h.lower(): h for h in header if h not in avoid}
    for name in names:
        if name in lower:
            return lower[name]
    raise InputError(f"{path.name} has no {what} column (looked for: {', '.join(names)}).",
                     hint=f"Its columns: {', '.join(header)}. Name the column with the {what} option.")


def extra_fields(row: Mapping[str, Any], used: Sequence[str | None]) -> dict[str, str]:
    return {k: "" if v is None else str(v) for k, v in row.items() if k not in used and not isinstance(v, list | dict)}


def table_rows(path: Path, control: TaskControl | None) -> tuple[list[str], list[tuple[int, dict[str, Any]]]]:
    """Header and well-formed rows; malformed ones stop the run with their line numbers."""
    from bertstudio.core.training.data import RowIssue, raise_issues

    header, rows = read_table(path, control=control)
    raise_issues(path, [RowIssue(line, problem) for line, row, problem in rows if row is None])
    return header, [(line, row) for line, row, _ in rows if row is not None]


def finish_dataset(path: Path, examples: list[Example], issues: list[RowIssue], used: Sequence[str | None],
            header: Sequence[str]) -> Dataset:
    """The examples read, or every issue found with its line (nothing, or only issues, is an error)."""
    from bertstudio.core.training.data import raise_issues

    raise_issues(path, issues)
    if not examples:
        raise InputError(f"{path.name} has no examples.", hint="Add rows under the header.")
    columns = tuple(h for h in header if h not in used)
    return Dataset("", str(path), tuple(examples), columns)  # `read_dataset` names the task


@dataclass(frozen=True)
class PairFile:
    """A file of text pairs with a gold value each (NSP's label, an STS score): each column's name
    in messages and the names it is found by when none is given, how a gold cell reads (None: it
    cannot) and the two row messages. One shape, so NSP and similarity read pairs alike."""

    first: tuple[str, tuple[str, ...]]  # (what a message calls it, the names it is found by)
    second: tuple[str, tuple[str, ...]]
    gold: tuple[str, tuple[str, ...]]
    gold_of: Callable[[Any], Any]
    empty: str  # the issue of a row with an empty text
    bad_gold: str  # the issue of a gold value gold_of cannot read, "{value}" in it


def read_pairs(path: Path, columns: EvalColumns, control: TaskControl | None, kind: PairFile) -> Dataset:
    """inputs = (first, second), gold = kind.gold_of(the gold cell); the columns are the ones given
    (text, pair, label) or found by kind's names, each distinct; a bad row is a numbered issue."""
    from bertstudio.core.training.data import RowIssue

    header, rows = table_rows(path, control)
    gold_column = pick_column(header, columns.label, kind.gold[1], kind.gold[0], path)
    first = pick_column(header, columns.text, kind.first[1], kind.first[0], path, (gold_column,))
    second = pick_column(header, columns.pair, kind.second[1], kind.second[0], path, (gold_column, first))
    names = (first, second, gold_column)
    examples, issues = [], []
    for line, row in rows:
        tick(control, line)
        a, b = str(row.get(first) or "").strip(), str(row.get(second) or "").strip()
        gold = kind.gold_of(row.get(gold_column, ""))
        if not a or not b:
            issues.append(RowIssue(line, kind.empty))
        elif gold is None:
            issues.append(RowIssue(line, kind.bad_gold.format(value=row.get(gold_column))))
        else:
            examples.append(Example(line, f"{a} ||| {b}", (a, b), gold, extra_fields(row, names)))
    return finish_dataset(path, examples, issues, names, header)


def read_dataset(task: str, path: str | Path, columns: EvalColumns | None = None,
                 control: TaskControl | None = None) -> Dataset:
    """The labelled examples of `path` for the task `task` (a spec key); `control` is checked
    every few thousand rows (a big file takes seconds to read)."""
    from bertstudio.core.tasks.spec import EvaluateAdapter, adapter_for

    path = regular_file(path, "data file")  # a FIFO, a device, a folder: said before anything is read
    dataset = adapter_for(task, EvaluateAdapter).read(path, columns or EvalColumns(), control)  # the spec's reader
    return replace(dataset, task=task)


