"""Fix it: a suite's failing cases become labelled training rows.

MFT: the failing input with its expected label. INV: the changed input with the original's
prediction (the model should say the same of both). DIR cases are reported, never labelled: a
direction is not a label. Rows here are for tasks whose training data is a labelled table
(classification; NSP's pair rows are written too); NER, QA and multiple choice write their own
formats (fix_tasks.py).

So that the "after" is honest, each test's cases are split (seeded) into a "train" half, whose
failures become rows, and a "measure" half that training never sees; the fix is judged on the
"measure" half. Cases that share an original input stay on the same side.

Failures alone teach too much: on the MiniLM sentiment head, 32 rows of "The X was not bad." ->
positive fixed that test and taught "not" -> positive (the "not positive" test went from 0 % to
100 % failures). So a fix also replays, for each failure, the passing MFT case of the train halves
most like it (words and word pairs; another label first): the model learns the failure beside
its contrast.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.suites.runner import SuiteResult, TestResult
from bertstudio.core.suites.suite import SuiteTest
from bertstudio.core.suites.tasks import adapter

TRAIN, MEASURE = "train", "measure"
MAX_ANCHOR_POOL = 2000  # failures given anchors, and passing cases searched: a bounded number of comparisons


@dataclass(frozen=True)
class TrainingRow:
    text: str
    pair: str | None
    label: str
    test: str
    type: str
    split: str  # "train" or "measure"
    kind: str = "failure"  # or "anchor": a passing case replayed so the fix does not undo it


def split_cases(test: SuiteTest, seed: int = 0) -> tuple[frozenset[int], frozenset[int]]:
    """(train, measure) case indices: half of the test's original inputs each, the same for a seed."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for n, case in enumerate(test.cases):
        groups.setdefault(case.original, []).append(n)
    order = list(groups.values())
    random.Random(f"{seed}:{test.name}").shuffle(order)
    half = (len(order) + 1) // 2
    train = frozenset(n for group in order[:half] for n in group)
    return train, frozenset(range(len(test.cases))) - train


def measured(result: SuiteResult, seed: int = 0) -> tuple[TestResult, ...]:
    """Every test judged on its "measure" half only: the before/after figures of a fix."""
    return tuple(test.only(split_cases(test.test, seed)[1]) for test in result.tests)


def can_label(task: str) -> bool:
    """Whether failures of this task's suites become labelled rows (a label is what MFT expects)."""
    return adapter(task).labelled


def labelled_failures(result: SuiteResult, seed: int = 0) -> Iterator[tuple[TestResult, Any, Any, str]]:
    """(test, parts, answer, half) of every failing MFT and INV case: MFT's expected answer for its
    input, INV's original prediction for the perturbed input (DIR cases are never labelled)."""
    for test in result.tests:
        if test.type == "DIR":
            continue
        train, _measure = split_cases(test.test, seed)
        for outcome in test.failing:
            case = outcome.case
            if test.type == "MFT":
                parts, answer = case.original, case.expect
            else:
                assert case.perturbed is not None
                parts, answer = case.perturbed, outcome.value
            yield test, parts, answer, TRAIN if outcome.index in train else MEASURE


def failure_rows(result: SuiteResult, seed: int = 0) -> list[TrainingRow]:
    """The labelled rows of every failing MFT and INV case, each marked with its half."""
    if not can_label(result.suite.task):
        return []
    return [TrainingRow(parts[0], parts[1] if len(parts) > 1 else None, str(answer), test.name, test.type, half)
            for test, parts, answer, half in labelled_failures(result, seed)]


def _words(text: str) -> frozenset[str]:
    """Words and word pairs: 'was not' ties "not bad" to "not good" more than to "bad"."""
    words = ["".join(ch for ch in w if ch.isalnum() or ch == "'") for w in text.lower().split()]
    words = [w for w in words if w]
    return frozenset(words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)])


def anchor_rows(result: SuiteResult, failures: Sequence[TrainingRow], seed: int = 0) -> list[TrainingRow]:
    """For each failure row, the passing MFT case of the train halves most like it (shared words and
    word pairs, Jaccard; another label first: "The phone was not good." for "The phone was not bad."), each used
    once, labelled with its expected answer: the contrast that keeps the fix from overshooting."""
    if not can_label(result.suite.task):
        return []
    pool: list[tuple[frozenset[str], TrainingRow]] = []
    for test in result.tests:
        if test.type != "MFT":
            continue
        train, _measure = split_cases(test.test, seed)
        for o in test.outcomes:
            if o.passed and o.index in train:
                parts = o.case.original
                row = TrainingRow(parts[0], parts[1] if len(parts) > 1 else None, str(o.case.expect), test.name,
                                  "MFT", TRAIN, "anchor")
                pool.append((_words(" ".join(parts)), row))
    random.Random(f"{seed}:anchors").shuffle(pool)  # ties go to a seeded pick
    pool = pool[:MAX_ANCHOR_POOL]
    rows: list[TrainingRow] = []
    for failure in list(failures)[:MAX_ANCHOR_POOL]:
        if not pool:
            break
        words = _words(" ".join(p for p in (failure.text, failure.pair) if p))

        def likeness(item: tuple[frozenset[str], TrainingRow], words: frozenset[str] = words,
                     label: str = failure.label) -> tuple[bool, float]:
            shared = len(words & item[0]) / max(1, len(words | item[0]))
            return item[1].label != label, shared

        best = max(range(len(pool)), key=lambda i: likeness(pool[i]))
        rows.append(pool.pop(best)[1])
    return rows


def fix_rows(result: SuiteResult, seed: int = 0) -> list[TrainingRow]:
    """What "Fine-tune on failures" adds: the train halves' failures and as many anchors."""
    failures = [r for r in failure_rows(result, seed) if r.split == TRAIN]
    return failures + anchor_rows(result, failures, seed)


def write_atomically(path: Path, header: Sequence[str], records: Sequence[Sequence[str]]) -> None:
    """The CSV written to a temporary file beside `path`, then moved over it in one step."""
    from bertstudio.core.outputs import write_with

    if path.exists() and not path.is_file():
        raise InputError(f"Cannot write '{path}': it is not a regular file.", hint="Give the name of a new file.")

    def write(out: Any) -> None:
        writer = csv.writer(out)
        writer.writerow(header)
        writer.writerows(records)

    try:
        write_with(path, write, text=True)
    except OSError as error:
        raise InputError(f"Cannot write '{path}': {error.strerror}.") from error


def target_folder(data: Path, folder: str | Path | None) -> Path:
    """Where a file made from the user's data goes: `folder`, else beside the data; never into the
    installed package (a demo dataset lives there: choose a folder for its copy)."""
    from bertstudio.core.outputs import refuse_inside_package

    where = Path(folder).expanduser() if folder is not None else data.parent
    if not where.is_dir():
        raise InputError(f"The folder '{where}' does not exist.", hint="Choose an existing folder.")
    refuse_inside_package(where, "folder for the data with the failures")
    return where


def new_beside(data: Path, suffix: str, folder: str | Path | None = None) -> Path:
    """`<data stem>.with-suite-failures<suffix>` in `target_folder`, numbered past any file already there."""
    where = target_folder(data, folder)
    target = where / f"{data.stem}.with-suite-failures{suffix}"
    number = 2
    while target.exists() or target.is_symlink():
        target = where / f"{data.stem}.with-suite-failures-{number}{suffix}"
        number += 1
    return target


def write_failures(rows: Sequence[TrainingRow], path: str | Path) -> Path:
    """Every failure row with its test, type and half (`--failures OUT.csv`)."""
    path = Path(path).expanduser()
    pairs = any(r.pair for r in rows)
    header = ["text", *(["text_pair"] if pairs else []), "label", "test", "type", "split"]
    write_atomically(path, header, [[r.text, *([r.pair or ""] if pairs else []), r.label, r.test, r.type, r.split]
                                     for r in rows])
    return path


def fix_file(data: str | Path, rows: Sequence[TrainingRow], folder: str | Path | None = None) -> tuple[Path, int]:
    """The user's training data plus the "train" half's rows (`fix_rows`: failures and anchors), written
    as a new file beside it, or in `folder` (never over any file, never into BERT Studio's own folder):
    (its path, rows added)."""
    from bertstudio.core.training.data import read_labelled

    data = Path(data).expanduser()
    target_folder(data, folder)
    original = read_labelled(data)
    added = [r for r in rows if r.split == TRAIN]
    if not any(r.kind == "failure" for r in added):
        raise InputError("No failing case of the suite's training half can become a row.",
                         hint="Only MFT and INV failures of classification suites are labelled.")
    pairs = original.pairs is not None
    if any(r.pair for r in added) and not pairs:
        raise InputError(f"The failures are text pairs, and {data.name} has one text per row.")
    records = [[t, *([p] if pairs else []), label]
               for t, p, label in zip(original.texts, original.pairs or original.texts, original.labels, strict=True)]
    records += [[r.text, *([r.pair or ""] if pairs else []), r.label] for r in added]
    header = [original.columns.text, *([original.columns.text_pair or "text_pair"] if pairs else []),
              original.columns.label]
    target = new_beside(data, ".csv", folder)
    write_atomically(target, header, records)
    return target, len(added)
