"""CoNLL files (token ... tag per line, blank line between sentences): what NER trains on
(train.py), is evaluated on (evaluate.py) and writes its suites' failures as (suite.py). Every
malformed line is reported with its number before anything runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bertstudio.core.datafiles import tick, too_many_rows
from bertstudio.core.errors import InputError
from bertstudio.core.files import read_text
from bertstudio.core.limits import MAX_ROWS
from bertstudio.core.progress import TaskControl
from bertstudio.core.training.data import RowIssue, raise_issues

_TAG = re.compile(r"^(O|[BIESL]-\S+|[BIESL]_\S+)$")


@dataclass(frozen=True)
class TaggedSentence:
    tokens: tuple[str, ...]
    tags: tuple[str, ...]
    line: int  # first line of the sentence


def read_conll(path: str | Path, control: TaskControl | None = None) -> list[TaggedSentence]:
    """CoNLL: 'token [other columns] tag' per line, blank line between sentences; -DOCSTART- skipped."""
    path = Path(path)
    issues: list[RowIssue] = []
    sentences: list[TaggedSentence] = []
    tokens: list[str] = []
    tags: list[str] = []
    start = 0

    def flush() -> None:
        if tokens:
            sentences.append(TaggedSentence(tuple(tokens), tuple(tags), start))
        tokens.clear()
        tags.clear()

    for number, line in enumerate(read_text(path, "data file").splitlines(), start=1):
        tick(control, number)
        fields = line.split()
        if not fields:
            flush()
            continue
        if fields[0] == "-DOCSTART-":
            flush()
            continue
        if len(fields) < 2:
            issues.append(RowIssue(number, f"'{line.strip()}' has a token but no tag"))
            continue
        if not _TAG.match(fields[-1]):
            issues.append(RowIssue(number, f"tag '{fields[-1]}' is not O, B-X or I-X"))
            continue
        if not tokens:
            if len(sentences) >= MAX_ROWS:
                raise too_many_rows(path)
            start = number
        tokens.append(fields[0])
        tags.append(fields[-1])
    flush()
    raise_issues(path, issues)
    if not sentences:
        raise InputError(f"{path.name} has no tagged sentences.", hint="Write one 'token tag' pair per line.")
    return sentences


def label_list(tag_sets: Sequence[Sequence[str]]) -> list[str]:
    """Labels in a stable order: O first, then entity types with B before I."""
    found = {t for tags in tag_sets for t in tags}
    return sorted(found, key=lambda t: (t != "O", t[2:] if len(t) > 2 else t, t[:1]))
