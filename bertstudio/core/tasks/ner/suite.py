"""What behavioural suites (core/suites) need of NER: a case's words, MFT's tags, and failing cases as
CoNLL sentences ("Fine-tune on failures", `check --failures`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bertstudio.core.tasks.ner.conll import read_conll
from bertstudio.core.tasks.spec import FixRow


def words(case: tuple[str, ...]) -> tuple[str, ...]:
    """A case as Evaluate's NER rows hold it: the text's words."""
    return tuple(case[0].split())


def expected_tags(value: Any) -> str:
    """MFT's `expect`: a list of tags (one per word) or the entities as a person writes them."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ""
    return "" if isinstance(value, str) and value else f"{value!r} is not a answer (a string)"


def meets_tags(value: Any, shown_value: str, expect: Any) -> bool:
    """NER's expectation: a list of tags (one per word) or the entities ('Klaus/PER; Vienna/LOC')."""
    return tuple(value) == tuple(expect) if isinstance(expect, list) else shown_value == str(expect)


def tagged_row(parts: tuple[str, ...], answer: Any) -> FixRow | None:
    """The sentence with a tag per word; None where the tags do not fit the words (never guessed)."""
    words_of = tuple(parts[0].split())
    tags = tuple(answer) if isinstance(answer, (list, tuple)) else None
    return ((" ".join(words_of),), tags) if tags is not None and len(tags) == len(words_of) and words_of else None


def conll(sentences: Sequence[tuple[Sequence[str], Sequence[str]]]) -> str:
    return "\n\n".join("\n".join(f"{w} {t}" for w, t in zip(words_of, tags, strict=True))
                       for words_of, tags in sentences) + "\n"


def write_rows(path: Path, rows: Sequence[FixRow]) -> None:
    """The rows alone as CoNLL (core/suites' writer imported here: suites are not read with the specs)."""
    from bertstudio.core.outputs import write_text

    write_text(path, conll([(parts[0].split(), answer) for parts, answer in rows]))


def extend_data(data: Path, target: Path, rows: Sequence[FixRow]) -> None:
    """The user's CoNLL as training reads it, then the rows, into `target`."""
    from bertstudio.core.outputs import write_text

    sentences = [(s.tokens, s.tags) for s in read_conll(data)]
    write_text(target, conll([*sentences, *((parts[0].split(), answer) for parts, answer in rows)]))
