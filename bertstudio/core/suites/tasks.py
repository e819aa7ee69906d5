"""What a suite needs of each task: the parts of one case, how a case becomes the task's
Evaluate input, and when two predictions (or a prediction and an expectation) agree.

A case is a tuple of strings, one per part (classification: text [, pair]; NER: the text; QA:
question, context; NSP: sentence A, sentence B; multiple choice: prompt, choice, choice...), so
templates and perturbations work on strings for every task.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Any

Case = tuple[str, ...]


@dataclass(frozen=True)
class SuiteTask:
    """One task as suites see it."""

    key: str  # the spec key
    parts: tuple[str, ...]  # names of a case's parts, for messages and `"on": PART`
    min_parts: int  # fewer is an error (QA needs a context)
    max_parts: int | None  # None: any number (choices)
    labelled: bool  # predictions are class labels (MFT `expect` is a label; DIR reads probabilities)
    example_gold: Any = None  # what Evaluate's reader would put in `gold` (QA: answers exist)

    def part_index(self, name: str) -> int | None:
        return self.parts.index(name) if name in self.parts else None


TASKS: dict[str, SuiteTask] = {
    "classification": SuiteTask("classification", ("text", "pair"), 1, 2, True),
    "ner": SuiteTask("ner", ("text",), 1, 1, False),
    "qa": SuiteTask("qa", ("question", "context"), 2, 2, False, example_gold=("?",)),
    "nsp": SuiteTask("nsp", ("first", "second"), 2, 2, True),
    "multiple-choice": SuiteTask("multiple-choice", ("prompt", "choice"), 3, None, False),
}


def example_inputs(task: SuiteTask, case: Case) -> Any:
    """The case as the task's Evaluate reader shapes `Example.inputs`."""
    if task.key == "classification":
        return (case[0], case[1] if len(case) > 1 else None)
    if task.key == "ner":
        return tuple(case[0].split())
    if task.key == "multiple-choice":
        return (case[0], list(case[1:]))
    return tuple(case)


def shown(case: Case) -> str:
    """What a person reads in a table: the parts joined as Evaluate joins a pair."""
    return " ||| ".join(case)


_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normal_answer(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, articles or extra spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(_ARTICLES.sub(" ", text).split())


def same(task: SuiteTask, a: Any, b: Any) -> bool:
    """Whether two predicted values are the same prediction (INV)."""
    if task.key == "qa":
        return normal_answer(str(a)) == normal_answer(str(b))
    if task.key == "ner":
        return tuple(a) == tuple(b)
    return bool(a == b)


def meets(task: SuiteTask, value: Any, shown_value: str, expect: Any) -> bool:
    """Whether a prediction is the expected one (MFT): a label, an answer, a choice index, or NER's
    tags (a list, one per word) or entities ('Klaus/PER; Vienna/LOC')."""
    if task.key == "qa":
        return normal_answer(str(value)) == normal_answer(str(expect))
    if task.key == "ner":
        if isinstance(expect, list):
            return tuple(value) == tuple(expect)
        return shown_value == str(expect)
    if task.key == "multiple-choice":
        return bool(int(value) == int(expect))
    return bool(str(value) == str(expect))
