"""Fix it beyond classification: failing cases as rows in each task's own training format.

NER: MFT's expected tags (one per word), or INV's changed sentence with the original's predicted
tags (where the change kept the number of words) -> CoNLL sentences. QA: the answer (MFT's
expected one, or INV's original prediction) located in the (changed) context -> SQuAD entries
with `answer_start`; an answer the context does not hold is reported, never guessed. Multiple
choice: MFT's expected choice, INV's original pick -> (prompt, choices, label) rows. DIR cases
are reported, never labelled. Rows keep the seeded train/measure halves of fix.py: only the
"train" half's rows go into the file training reads, the "measure" half judges the fix.

The new file holds the user's data as the trainer reads it (core/training's readers) and then the
rows, written beside the data (never over it).
"""

from __future__ import annotations

import json
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
    write_atomically,
)
from bertstudio.core.suites.runner import SuiteResult
from bertstudio.core.suites.tasks import adapter

FORMATS = {"tags": ".conll", "answer": ".json", "choice": ".csv"}  # SuiteAdapter.expect -> file written


@dataclass(frozen=True)
class TaskRow:
    """One labelled case: its parts and the answer training learns (tags, (answer, start), or a choice)."""

    parts: tuple[str, ...]
    answer: Any
    test: str
    type: str
    split: str


def train_task(task: str) -> str:
    """The Train task for the suite's task: the spec's own, else the trainable that trains its head."""
    from bertstudio.core.tasks.spec import spec_for
    from bertstudio.core.training.trainable import TRAINABLE

    spec = spec_for(task)
    if spec.suite is not None and spec.suite.train_task:
        return spec.suite.train_task
    if spec.suite is None or spec.suite.expect not in FORMATS:
        return ""
    names = {spec.key, spec.cli_name}
    return next((key for key, t in TRAINABLE.items() if key in names or getattr(t, "command", "") in names), "")


def can_fine_tune(task: str) -> str:
    """The Train task the rows train ("" where the rows are not that task's training data)."""
    return train_task(task)


def _row(kind: str, parts: tuple[str, ...], answer: Any) -> tuple[tuple[str, ...], Any] | None:
    """(parts, answer) as training reads it, or None where the case cannot be labelled honestly."""
    if kind == "tags":
        words = tuple(parts[0].split())
        tags = tuple(answer) if isinstance(answer, (list, tuple)) else None
        return ((" ".join(words),), tags) if tags is not None and len(tags) == len(words) and words else None
    if kind == "answer":
        text = str(answer or "").strip()
        start = parts[1].find(text) if text else -1
        return (parts, (text, start)) if start >= 0 else None
    return (parts, int(answer))


def task_rows(result: SuiteResult, seed: int = 0) -> tuple[list[TaskRow], int]:
    """(rows of every failing MFT/INV case that can be labelled, each with its half; cases left out)."""
    kind = adapter(result.suite.task).expect
    if kind not in FORMATS:
        return [], 0
    rows, skipped = [], 0
    for test, parts, answer, half in labelled_failures(result, seed):
        found = _row(kind, parts, answer)
        if found is None:
            skipped += 1
            continue
        rows.append(TaskRow(found[0], found[1], test.name, test.type, half))
    return rows, skipped


# -- the files ---------------------------------------------------------------------------------
def _conll(sentences: Sequence[tuple[Sequence[str], Sequence[str]]]) -> str:
    return "\n\n".join("\n".join(f"{w} {t}" for w, t in zip(words, tags, strict=True))
                       for words, tags in sentences) + "\n"


def _squad(groups: Sequence[tuple[str, Sequence[tuple[str, str, tuple[str, int] | None]]]]) -> str:
    """SQuAD JSON: one entry per (title, [(question, context, (answer, start) or None)])."""
    data, n = [], 0
    for title, items in groups:
        paragraphs = []
        for question, context, answer in items:
            n += 1
            qa: dict[str, Any] = {"id": f"q{n}", "question": question}
            qa.update({"answers": [{"text": answer[0], "answer_start": answer[1]}]} if answer is not None
                      else {"answers": [], "is_impossible": True})
            paragraphs.append({"context": context, "qas": [qa]})
        data.append({"title": title, "paragraphs": paragraphs})
    return json.dumps({"version": "v2.0", "data": data}, ensure_ascii=False, indent=1) + "\n"


def _choice_records(items: Sequence[tuple[str, Sequence[str], int]]) -> tuple[list[str], list[list[str]]]:
    most = max(len(choices) for _p, choices, _l in items)
    header = ["prompt", *(f"choice{i}" for i in range(most)), "label"]
    return header, [[p, *choices, *([""] * (most - len(choices))), str(label)] for p, choices, label in items]


def _write_text(path: Path, text: str) -> None:
    import os
    import tempfile

    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_task_rows(task: str, rows: Sequence[TaskRow], path: str | Path) -> Path:
    """The rows alone in the task's training format (NER CoNLL, QA SQuAD JSON, choice CSV)."""
    path = Path(path).expanduser()
    kind = adapter(task).expect
    try:
        if kind == "tags":
            _write_text(path, _conll([(r.parts[0].split(), r.answer) for r in rows]))
        elif kind == "answer":
            _write_text(path, _squad([("suite failures", [(r.parts[0], r.parts[1], r.answer) for r in rows])]))
        else:
            header, records = _choice_records([(r.parts[0], r.parts[1:], r.answer) for r in rows] or [("", [], 0)])
            write_atomically(path, header, records if rows else [])
    except OSError as error:
        raise InputError(f"Cannot write '{path}': {error.strerror}.") from error
    return path


def task_fix_file(task: str, data: str | Path, rows: Sequence[TaskRow]) -> tuple[Path, int]:
    """The user's data as training reads it plus the train half's rows, as a new file beside it."""
    from bertstudio.core.training import data as data_mod

    kind = adapter(task).expect
    data = Path(data).expanduser()
    added = [r for r in rows if r.split == TRAIN]
    if not added:
        raise InputError("No failing case of the suite's training half can become a row.",
                         hint="MFT and INV failures are labelled; DIR cases, and answers their context does not "
                              "hold, are not.")
    target = _beside(data, FORMATS[kind])
    if kind == "tags":
        sentences = [(s.tokens, s.tags) for s in data_mod.read_conll(data)]
        _write_text(target, _conll([*sentences, *((r.parts[0].split(), r.answer) for r in added)]))
    elif kind == "answer":
        from bertstudio.core.tasks.qa.train_read import read_qa

        mine = [(x.question, x.context, (x.answers[0], x.start) if x.answers else None) for x in read_qa(data)]
        _write_text(target, _squad([(data.stem, mine),
                                    ("suite failures", [(r.parts[0], r.parts[1], r.answer) for r in added])]))
    else:
        from bertstudio.core.tasks.multiple_choice.train import read_choices

        items = [(x.inputs[0], list(x.inputs[1]), int(x.gold)) for x in read_choices(str(data))]
        header, records = _choice_records([*items, *((r.parts[0], list(r.parts[1:]), r.answer) for r in added)])
        write_atomically(target, header, records)
    return target, len(added)


def _beside(data: Path, suffix: str) -> Path:
    target = data.with_name(f"{data.stem}.with-suite-failures{suffix}")
    number = 2
    while target.exists():
        target = data.with_name(f"{data.stem}.with-suite-failures-{number}{suffix}")
        number += 1
    return target


def write_fix(result: SuiteResult, data: str | Path, seed: int = 0) -> tuple[Path, int]:
    """What "Fine-tune on failures" writes for any task: classification's table (failures and their
    anchors, fix.py), else the task's own format (this module)."""
    if can_label(result.suite.task):
        return fix_file(data, fix_rows(result, seed))
    return task_fix_file(result.suite.task, data, task_rows(result, seed)[0])
