"""What a suite needs of a task, asked of its spec (`spec.suite`, a tasks.spec.SuiteAdapter), and
the small functions the task specs name there.

A case is a tuple of strings, one per part (classification: text [, pair]; NER: the text; QA:
question, context; NSP: sentence A, sentence B; multiple choice: prompt, choice, choice...), so
templates and perturbations work on strings for every task.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from typing import Any

from bertstudio.core.tasks.spec import SuiteAdapter, TaskSpec

Case = tuple[str, ...]


def suite_specs() -> Iterator[TaskSpec]:
    """The task specs suites can test (those with a SuiteAdapter and an Evaluate adapter to score with)."""
    from bertstudio.core.tasks.spec import all_specs

    return (spec for spec in all_specs().values() if spec.suite is not None and spec.evaluate is not None)


def adapter(task: str) -> SuiteAdapter:
    """The suite adapter of the task with key `task`."""
    from bertstudio.core.tasks.spec import spec_for

    found = spec_for(task).suite
    if found is None:
        raise ValueError(f"the task {task!r} has no suite adapter")
    return found


def part_index(task: SuiteAdapter, name: str) -> int | None:
    return task.parts.index(name) if name in task.parts else None


def shown(case: Case) -> str:
    """What a person reads in a table: the parts joined as Evaluate joins a pair."""
    return " ||| ".join(case)


def same(task: SuiteAdapter, a: Any, b: Any) -> bool:
    """Whether two predicted values are the same prediction (INV)."""
    return bool(task.same(a, b)) if task.same is not None else bool(a == b)


def meets(task: SuiteAdapter, value: Any, shown_value: str, expect: Any) -> bool:
    """Whether a prediction is the expected one (MFT)."""
    return bool(task.meets(value, shown_value, expect)) if task.meets is not None else str(value) == str(expect)


# -- the functions the specs name ------------------------------------------------------------------
def text_and_pair(case: Case) -> tuple[str, str | None]:
    return (case[0], case[1] if len(case) > 1 else None)


def words(case: Case) -> tuple[str, ...]:
    return tuple(case[0].split())


def parts(case: Case) -> tuple[str, ...]:
    return tuple(case)


def prompt_and_choices(case: Case) -> tuple[str, list[str]]:
    return (case[0], list(case[1:]))


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def normal_answer(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, articles or extra spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def same_answer(a: Any, b: Any) -> bool:
    return normal_answer(str(a)) == normal_answer(str(b))


def meets_answer(value: Any, _shown: str, expect: Any) -> bool:
    return same_answer(value, expect)


def meets_tags(value: Any, shown_value: str, expect: Any) -> bool:
    """NER's expectation: a list of tags (one per word) or the entities ('Klaus/PER; Vienna/LOC')."""
    return tuple(value) == tuple(expect) if isinstance(expect, list) else shown_value == str(expect)


def meets_choice(value: Any, _shown: str, expect: Any) -> bool:
    return bool(int(value) == int(expect))


def nsp_labels(_loaded: Any) -> tuple[str, ...]:
    """NSP's classes as its Evaluate predictor names them (the NSP head's logits have no id2label)."""
    from bertstudio.core.evaluate.predict import NSP_CLASSES

    return tuple(NSP_CLASSES)
