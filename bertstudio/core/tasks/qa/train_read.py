"""Reading QA training data: where each question's answer is in its context, by the file's own word.

SQuAD defines an answer by its text and `answer_start`, the character offset of that text in the
context; an answer text may occur several times ("1990" in "In 1990 Ada moved... born in 1990"),
so the offset, not a search, says which occurrence is the answer. Training uses the first answer's
`answer_start` (a table may carry an `answer_start` column) and checks it: a whole number inside
the context, pointing at exactly the answer text; otherwise the entry and its line are named. Where a
file gives no offset, the answer must occur once in its context (else which one is meant is unknown).
Structure and sizes are checked by Evaluate's readers (core/evaluate), read first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.evaluate.readers import EvalColumns
from bertstudio.core.tasks.qa.evaluate import read_file
from bertstudio.core.training import data as data_mod

START = "answer_start"
NOT_GIVEN = object()  # the entry has no answer_start


@dataclass(frozen=True)
class QAExample:
    line: int
    question: str
    context: str
    answers: tuple[str, ...]  # empty: no answer in the context (SQuAD v2.0)
    start: int  # character offset of answers[0] in the context; -1 when there is none


def _shown(value: object) -> str:
    """A JSON value as the file spells it (NaN, Infinity, "28", true), cut for a message."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text[:40]


def _occurrences(context: str, answer: str) -> list[int]:
    found, at = [], context.find(answer)
    while at >= 0:
        found.append(at)
        at = context.find(answer, at + 1)
    return found


def locate(line: int, question: str, context: str, answers: tuple[str, ...], given: object,
           field: str) -> QAExample | data_mod.RowIssue:
    """The example with its answer's offset, or the issue that names what is wrong. `given`: the first
    answer's answer_start as the file holds it (NOT_GIVEN when it has none); `field`: where it is."""
    if not answers:
        return QAExample(line, question, context, (), -1)
    first = answers[0]
    if not first.strip():
        return data_mod.RowIssue(line, "the answer is empty")
    found = _occurrences(context, first)
    if given is NOT_GIVEN:
        if not found and len(context.lower()) == len(context):  # a case-insensitive match keeps its offset
            found = _occurrences(context.lower(), first.lower())
        if len(found) == 1:
            return QAExample(line, question, context, answers, found[0])
        if not found:
            return data_mod.RowIssue(line, f"the answer '{first[:80]}' is not in its context")
        return data_mod.RowIssue(line, f"the answer '{first[:80]}' occurs {len(found)} times in its context and "
                                       f"no {field} says which one is meant (give its character offset, as SQuAD "
                                       "files do)")
    if type(given) is not int:  # bool, str, float (NaN, 1e400 = Infinity) are not offsets
        return data_mod.RowIssue(line, f"{field} is {_shown(given)}: it must be a whole number, the "
                                       "answer's character offset in its context")
    if not 0 <= given <= len(context) - len(first):
        return data_mod.RowIssue(line, f"{field} is {given}: the answer '{first[:80]}' cannot start there "
                                       f"in a context of {len(context)} characters")
    if context[given:given + len(first)] != first:
        if not found:
            return data_mod.RowIssue(line, f"the answer '{first[:80]}' is not in its context")
        at = ", ".join(map(str, found[:5])) + ("…" if len(found) > 5 else "")
        return data_mod.RowIssue(line, f"{field} is {given}, where the context reads "
                                       f"'{context[given:given + len(first)][:80]}', not the answer '{first[:80]}' "
                                       f"(it is at {at})")
    return QAExample(line, question, context, answers, given)


def _squad_starts(path: Path, count: int) -> list[tuple[str, object]]:
    """(entry name, first answer's answer_start) of every question, in the order read_squad lists them
    (it found no malformed entry, so every question is listed: the two walks agree)."""
    from bertstudio.core.datafiles import parse_json
    from bertstudio.core.files import read_text

    document = parse_json(read_text(path, "data file"), path.name)
    found: list[tuple[str, object]] = []
    for e, entry in enumerate(document["data"]):
        for p, paragraph in enumerate(entry["paragraphs"]):
            for q, qa in enumerate(paragraph["qas"]):
                answers = qa.get("answers") or []
                first = answers[0] if answers and not qa.get("is_impossible", False) else {}
                found.append((f"data[{e}].paragraphs[{p}].qas[{q}].answers[0].{START}", first.get(START, NOT_GIVEN)))
    if len(found) != count:  # pragma: no cover - read_squad and this walk disagree: never guess
        raise InputError(f"{path.name} could not be read consistently.", hint="Check that it is SQuAD JSON.")
    return found


def _table_start(fields: Any) -> object:
    """A table's answer_start column: a whole number, NOT_GIVEN when empty or absent, else the text."""
    raw = str(fields.get(START, "")).strip() if START in fields else ""
    if not raw:
        return NOT_GIVEN
    return int(raw) if raw.isascii() and raw.isdigit() else raw


def read_qa(path: str | Path) -> list[QAExample]:
    """Every question checked: SQuAD JSON by its reader, tables by Evaluate's; an answer that is not in
    its context, or not where answer_start says, stops the run with the entry and line it is on."""
    from bertstudio.core.files import regular_file
    from bertstudio.core.tasks.qa.squad import read_squad

    path = regular_file(path, "data file")
    found: Sequence[QAExample | data_mod.RowIssue]
    if path.suffix.lower() == ".json":
        questions, problems = read_squad(path)
        data_mod.raise_issues(path, [data_mod.RowIssue(line, problem) for line, problem in problems])
        starts = _squad_starts(path, len(questions))
        found = [locate(q.line, q.question, q.context, q.answers, given, where)
                 for q, (where, given) in zip(questions, starts, strict=True)]
    else:
        dataset = read_file(path, EvalColumns())  # every column detected
        found = [locate(x.line, x.inputs[0], x.inputs[1], tuple(x.gold), _table_start(x.fields),
                        f"column {START}") for x in dataset.examples]
    data_mod.raise_issues(path, [x for x in found if isinstance(x, data_mod.RowIssue)])
    examples = [x for x in found if isinstance(x, QAExample)]
    if not examples:
        raise InputError(f"{path.name} has no questions.", hint="Add questions with their contexts.")
    return examples
