"""Fix it beyond classification: failing cases as rows in each task's own training format.

MFT's expected answer, or INV's changed input with the original's prediction, becomes a row the way
the task says (`spec.suite.fix`, a tasks.spec.SuiteFix defined in core/tasks/<task>/suite.py: NER's
CoNLL sentences, QA's SQuAD entries with `answer_start`, multiple choice's (prompt, choices, label)
table); a case the task cannot label honestly (an answer its context does not hold) is reported,
never guessed. DIR cases are reported, never labelled. Rows keep the seeded train/measure halves of
fix.py: only the "train" half's rows go into the file training reads, the "measure" half judges the fix.

The new file holds the user's data as the trainer reads it and then the rows, written beside the
data (never over it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.suites.fix import (
    TRAIN,
    can_label,
    fix_file,
    fix_rows,
    labelled_failures,
    new_beside,
    target_folder,
)
from bertstudio.core.suites.runner import SuiteResult
from bertstudio.core.suites.tasks import adapter
from bertstudio.core.tasks.spec import SuiteFix


@dataclass(frozen=True)
class TaskRow:
    """One labelled case: its parts and the answer training learns (tags, (answer, start), or a choice)."""

    parts: tuple[str, ...]
    answer: Any
    test: str
    type: str
    split: str


def train_task(task: str) -> str:
    """The Train task the failure rows train: the first trainable of the task's spec (the one named as
    the task), where its failures become rows (labelled table rows, or the task's own format)."""
    from bertstudio.core.tasks.spec import spec_for

    spec = spec_for(task)
    if spec.suite is None or not (spec.suite.labelled or spec.suite.fix is not None) or not spec.trainables:
        return ""
    return str(spec.trainables[0].key)


def _fix(task: str) -> SuiteFix:
    found = adapter(task).fix
    if found is None:
        raise InputError("This task's failures have no training format of their own.",
                         hint="Labelled tasks write their failures as a table (--failures OUT.csv).")
    return found


def task_rows(result: SuiteResult, seed: int = 0) -> tuple[list[TaskRow], int]:
    """(rows of every failing MFT/INV case that can be labelled, each with its half; cases left out)."""
    fix = adapter(result.suite.task).fix
    if fix is None:
        return [], 0
    rows, skipped = [], 0
    for test, parts, answer, half in labelled_failures(result, seed):
        found = fix.row(parts, answer)
        if found is None:
            skipped += 1
            continue
        rows.append(TaskRow(found[0], found[1], test.name, test.type, half))
    return rows, skipped


def write_task_rows(task: str, rows: Sequence[TaskRow], path: str | Path) -> Path:
    """The rows alone in the task's training format (NER CoNLL, QA SQuAD JSON, choice CSV)."""
    path = Path(path).expanduser()
    fix = _fix(task)
    try:
        fix.write(path, [(r.parts, r.answer) for r in rows])
    except OSError as error:
        raise InputError(f"Cannot write '{path}': {error.strerror}.") from error
    return path


def half_paths(task: str, path: str | Path) -> tuple[Path, Path]:
    """Where `check --failures PATH` writes the train half (PATH itself) and the measure half (beside it,
    `.measure` before the ending): a CoNLL or SQuAD file has no column for the half."""
    _fix(task)
    path = Path(path).expanduser()
    return path, path.with_name(f"{path.stem}.measure{path.suffix}")


def write_task_halves(task: str, rows: Sequence[TaskRow], path: str | Path) -> tuple[Path, Path]:
    """The train half's rows into `path`, the measure half's beside it (`half_paths`), each in the task's
    training format, so the fix is trained on one half and judged on the other."""
    train, measure = half_paths(task, path)
    write_task_rows(task, [r for r in rows if r.split == TRAIN], train)
    write_task_rows(task, [r for r in rows if r.split != TRAIN], measure)
    return train, measure


def task_fix_file(task: str, data: str | Path, rows: Sequence[TaskRow],
                  folder: str | Path | None = None) -> tuple[Path, int]:
    """The user's data as training reads it plus the train half's rows, as a new file beside it (or in
    `folder`; never into BERT Studio's own folder)."""
    fix = _fix(task)
    data = Path(data).expanduser()
    target_folder(data, folder)
    added = [r for r in rows if r.split == TRAIN]
    if not added:
        raise InputError("No failing case of the suite's training half can become a row.",
                         hint="MFT and INV failures are labelled; DIR cases, and answers their context does not "
                              "hold, are not.")
    target = new_beside(data, fix.suffix, folder)
    fix.extend(data, target, [(r.parts, r.answer) for r in added])
    return target, len(added)


def write_fix(result: SuiteResult, data: str | Path, seed: int = 0,
              folder: str | Path | None = None) -> tuple[Path, int]:
    """What "Fine-tune on failures" writes for any task: classification's table (failures and their
    anchors, fix.py), else the task's own format (`spec.suite.fix`); beside the data or in `folder`."""
    if can_label(result.suite.task):
        return fix_file(data, fix_rows(result, seed), folder)
    return task_fix_file(result.suite.task, data, task_rows(result, seed)[0], folder)
