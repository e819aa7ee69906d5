"""Per-task row functions the specs' EvaluateAdapter names: a dataset row as its task's input (so
the error browser opens it in the task's own tab), its gold as a person reads it, whether a
prediction is right, its slice label, and the text (pair) the projector embeds."""

from __future__ import annotations

from typing import Any

from bertstudio.core.evaluate.readers import Example


def row_inputs(task: str, example: Example) -> Any:
    """The spec's input dataclass for one evaluated row (what that task's tab `set_inputs` takes)."""
    from bertstudio.core.evaluate.adapters import adapter_for

    return adapter_for(task).inputs_of(example)


# -- the task's input -----------------------------------------------------------------------------
def classification_input(example: Example) -> Any:
    from bertstudio.core.tasks.classification import ClassificationInput

    text, pair = example.inputs
    return ClassificationInput(text, pair or None)


def ner_input(example: Example) -> Any:
    from bertstudio.core.tasks.ner import NerInput

    return NerInput(" ".join(example.inputs))


def qa_input(example: Example) -> Any:
    from bertstudio.core.tasks.qa import QAInput

    return QAInput(*example.inputs)


def nsp_input(example: Example) -> Any:
    from bertstudio.core.tasks.nsp import NspInput

    return NspInput(example.inputs[0], (example.inputs[1],))


def choice_input(example: Example) -> Any:
    from bertstudio.core.tasks.multiple_choice import ChoiceInput

    return ChoiceInput(example.inputs[0], tuple(example.inputs[1]))


def fill_mask_input(example: Example) -> Any:
    from bertstudio.core.tasks.fill_mask import FillMaskInput

    return FillMaskInput(str(example.inputs))


# -- gold as shown, right or wrong, slice label ---------------------------------------------------
def ner_gold(example: Example, prediction: Any) -> str:
    from bertstudio.core.evaluate.predict import entities_text

    return entities_text(example.inputs, example.gold)


def qa_gold(example: Example, prediction: Any) -> str:
    return " | ".join(example.gold) if example.gold else "(no answer)"


def masked_gold(example: Example, prediction: Any) -> str:
    return " ".join(prediction.value.gold)


def choice_gold(example: Example, prediction: Any) -> str:
    return f"{example.gold}: {example.inputs[1][example.gold]}"


def qa_correct(gold: Any, prediction: Any) -> bool:
    from bertstudio.core.evaluate import squad

    return bool(squad.exact_match(gold, prediction))


def masked_correct(gold: Any, prediction: Any) -> bool:
    """Every masked token of the row is the model's first guess."""
    return bool(prediction.masked > 0 and prediction.top1 == prediction.masked)


def qa_label(example: Example) -> str:
    return "answerable" if example.gold else "no answer"


# -- what the projector embeds ------------------------------------------------------------------
def pair_of_two(example: Example) -> tuple[str, str | None]:
    """(text, pair), (sentence A, B), (question, context)."""
    first, second = example.inputs
    return str(first), (str(second) if second else None)


def pair_of_words(example: Example) -> tuple[str, str | None]:
    return " ".join(example.inputs), None


def pair_of_prompt(example: Example) -> tuple[str, str | None]:
    return str(example.inputs[0]), None


def pair_of_text(example: Example) -> tuple[str, str | None]:
    return str(example.inputs), None
