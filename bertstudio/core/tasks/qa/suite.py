"""What behavioural suites (core/suites) need of QA: a case's question and context, answers compared as
SQuAD compares them, and failing cases as SQuAD entries with `answer_start` ("Fine-tune on failures",
`check --failures`); an answer its context does not hold is left out, never guessed."""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bertstudio.core.tasks.qa.train_read import read_qa
from bertstudio.core.tasks.spec import FixRow

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def question_and_context(case: tuple[str, ...]) -> tuple[str, ...]:
    """A case as Evaluate's QA rows hold it: (question, context)."""
    return tuple(case)


def expected_answer(value: Any) -> str:
    """MFT's `expect`: the answer's text (empty: no answer)."""
    return "" if isinstance(value, str) else f"{value!r} is not a answer (a string)"


def normal_answer(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, articles or extra spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def same_answer(a: Any, b: Any) -> bool:
    return normal_answer(str(a)) == normal_answer(str(b))


def meets_answer(value: Any, _shown: str, expect: Any) -> bool:
    return same_answer(value, expect)


def located_row(parts: tuple[str, ...], answer: Any) -> FixRow | None:
    """(parts, (answer, its start in the context)); None where the context does not hold the answer."""
    text = str(answer or "").strip()
    start = parts[1].find(text) if text else -1
    return (parts, (text, start)) if start >= 0 else None


def squad(groups: Sequence[tuple[str, Sequence[tuple[str, str, tuple[str, int] | None]]]]) -> str:
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


def write_rows(path: Path, rows: Sequence[FixRow]) -> None:
    """The rows alone as SQuAD JSON (core/suites' writer imported here: suites are not read with the specs)."""
    from bertstudio.core.outputs import write_text

    write_text(path, squad([("suite failures", [(parts[0], parts[1], answer) for parts, answer in rows])]))


def extend_data(data: Path, target: Path, rows: Sequence[FixRow]) -> None:
    """The user's questions as training reads them (read_qa), then the rows, into `target`."""
    from bertstudio.core.outputs import write_text

    mine = [(x.question, x.context, (x.answers[0], x.start) if x.answers else None) for x in read_qa(data)]
    write_text(target, squad([(data.stem, mine),
                              ("suite failures", [(parts[0], parts[1], answer) for parts, answer in rows])]))
