"""The pre-training corpus: plain text, one sentence per line, a blank line between documents.
Every malformed line is reported with its number before training.
"""

from __future__ import annotations

from pathlib import Path

from bertstudio.core.errors import InputError
from bertstudio.core.files import read_text
from bertstudio.core.training.data import RowIssue, raise_issues


def read_corpus(path: str | Path) -> list[list[str]]:
    """Documents as lists of sentences (one per line; blank lines separate documents)."""
    path = Path(path)
    issues: list[RowIssue] = []
    documents: list[list[str]] = [[]]
    for number, line in enumerate(read_text(path, "training text").splitlines(), start=1):
        text = line.strip()
        if not text:
            if documents[-1]:
                documents.append([])
            continue
        if any(ord(c) < 32 and c not in "\t" for c in text):
            issues.append(RowIssue(number, "control characters in the line (is this a binary file?)"))
            continue
        documents[-1].append(text)
    raise_issues(path, issues)
    documents = [d for d in documents if d]
    if len(documents) < 2 or sum(len(d) for d in documents) < 4:
        raise InputError(
            f"{path.name} is too small for pre-training: it needs at least two documents "
            "(separated by a blank line) and a few sentences.",
        )
    return documents
