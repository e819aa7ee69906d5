"""Between a task's own input dataclass and the plain texts the explanations take.

A task tab's "Explain…" hands over its spec's input (FillMaskInput, QAInput...); the Explain tab
and the CLI also take typed parts. Each task's spec names its two directions here
(`ExplainAdapter.texts_of` / `inputs_of`), so the tab and the CLI agree on what "the input" of a
task is, and nothing here switches on a task key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bertstudio.core.errors import InputError

if TYPE_CHECKING:
    from bertstudio.core.tasks.spec import ExplainAdapter, TaskSpec


class WrongParts(InputError):
    """The input has too few or too many parts for its task; `takes` says what it takes
    (the CLI writes "<command> takes ...", naming the command the person typed)."""

    def __init__(self, takes: str, hint: str = "") -> None:
        super().__init__(f"This task takes {takes}.", hint=hint)
        self.takes = takes


def explainable() -> tuple[TaskSpec, ...]:
    """The specs with an Explain adapter, in their order (the Explain tab's and the CLI's list)."""
    from bertstudio.core.tasks.spec import all_specs

    return tuple(spec for spec in all_specs().values() if spec.explain is not None)


def adapter_for(task: str) -> ExplainAdapter:
    """The Explain adapter of a task key (InputError for a task without one)."""
    from bertstudio.core.tasks.spec import all_specs

    spec = all_specs().get(task)
    if spec is None or spec.explain is None:
        names = ", ".join(s.key for s in explainable())
        raise InputError(f"{task} cannot be explained.", hint=f"Explainable tasks: {names}.")
    return spec.explain


def texts_of(task: str, inputs: Any) -> tuple[str, ...]:
    """The texts of a task's input dataclass (the first row or candidate where there are several)."""
    return tuple(adapter_for(task).texts_of(inputs))


def task_inputs(task: str, texts: tuple[str, ...]) -> Any:
    """The task's own input dataclass from texts (for running the task itself, e.g. heads pruned)."""
    return adapter_for(task).inputs_of(tuple(texts))


def target_of(task: str, result: Any) -> str | None:
    """The --target a task's own result answered (its label, top candidate, choice...): a hand-off
    explains that answer without a forward pass to find it again. None: the task's default."""
    adapter = adapter_for(task)
    return None if adapter.target_of is None or result is None else adapter.target_of(result)


def split_lines(task: str, text: str) -> tuple[str, ...]:
    """Typed input, one part per line (a task read as one text keeps its lines together)."""
    lines = tuple(line.strip() for line in text.splitlines() if line.strip())
    if adapter_for(task).one_text:
        return (" ".join(lines),) if lines else ()
    return lines


def _count(texts: tuple[str, ...], low: int, high: int | None, takes: str, hint: str = "") -> None:
    if len(texts) < low or (high is not None and len(texts) > high):
        raise WrongParts(takes, hint)


def _text(inputs: Any) -> tuple[str, ...]:
    text = getattr(inputs, "text", None)
    if text is None:
        raise InputError(f"This {type(inputs).__name__} cannot be explained.")
    return (str(text),)


# -- per task: named by each task's SPEC (explain=ExplainAdapter(...)) --------------------------
def fill_mask_texts(inputs: Any) -> tuple[str, ...]:
    return _text(inputs)


def fill_mask_inputs(texts: tuple[str, ...]) -> Any:
    from bertstudio.core.tasks.fill_mask import FillMaskInput

    _count(texts, 1, 1, "one text", 'Give the text with a mask token as one INPUT (quoted).')
    return FillMaskInput(texts[0])


def fill_mask_target(result: Any) -> str | None:
    """The top candidate's token id at the first mask (a token, not a word the tokenizer might split)."""
    masks = getattr(result, "masks", ())
    return str(masks[0].candidates[0].token_id) if masks and masks[0].candidates else None


def nsp_texts(inputs: Any) -> tuple[str, ...]:
    candidates = tuple(getattr(inputs, "candidates", ()) or ())
    second = candidates[0] if candidates else getattr(inputs, "sentence_b", "")
    return (str(inputs.sentence_a), str(second))


def nsp_inputs(texts: tuple[str, ...]) -> Any:
    from bertstudio.core.tasks.nsp import NspInput

    _count(texts, 2, 2, "two sentences: A and B", 'Give sentence A and sentence B: "A" "B".')
    return NspInput(texts[0], tuple(texts[1:]))


def nsp_target(result: Any) -> str | None:
    """The label the pair was given (ranked candidates carry no single answer: the default, IsNext)."""
    is_next, not_next = getattr(result, "is_next", None), getattr(result, "not_next", None)
    if is_next is None or not_next is None:
        return None
    return "is_next" if is_next >= not_next else "not_next"


def ner_texts(inputs: Any) -> tuple[str, ...]:
    return _text(inputs)


def ner_inputs(texts: tuple[str, ...]) -> Any:
    from bertstudio.core.tasks.ner import NerInput

    _count(texts, 1, 1, "one text", 'Give the text as one INPUT (quoted).')
    return NerInput(texts[0], views=False)


def ner_target(_result: Any) -> str | None:
    """The default (the first entity's first token) is the result's own: its tags need the forward anyway."""
    return None


def qa_texts(inputs: Any) -> tuple[str, ...]:
    return (str(inputs.question), str(inputs.context))


def qa_inputs(texts: tuple[str, ...]) -> Any:
    from bertstudio.core.tasks.qa import QAInput

    _count(texts, 2, 2, "a question and a context", 'Use --question "..." --context "...".')
    return QAInput(texts[0], texts[1])


def qa_target(_result: Any) -> str | None:
    """The best answer's start, the default (its span is found again in the window explained)."""
    return None


def classification_texts(inputs: Any) -> tuple[str, ...]:
    if getattr(inputs, "texts", None):
        return (str(inputs.texts[0]),)
    if not hasattr(inputs, "text"):  # a batch read from a file: its rows are not in the input
        raise InputError("A file's rows are explained one at a time.",
                         hint="Classify the row as one text, or explain the file's rows in the Evaluate tab.")
    pair = getattr(inputs, "pair", None)
    return (str(inputs.text), str(pair)) if pair else (str(inputs.text),)


def classification_inputs(texts: tuple[str, ...]) -> Any:
    from bertstudio.core.tasks.classification import ClassificationInput

    _count(texts, 1, 2, "a text, or a text and its pair", '"TEXT" [--pair "B"]')
    return ClassificationInput(texts[0], texts[1] if len(texts) > 1 else None)


def classification_target(result: Any) -> str | None:
    """The first row's top label (the row `classification_texts` explains)."""
    rows = getattr(result, "rows", ())
    return str(rows[0].top.label) if rows and rows[0].scores else None


def multiple_choice_texts(inputs: Any) -> tuple[str, ...]:
    return (str(inputs.prompt), *(str(c) for c in inputs.choices))


def multiple_choice_inputs(texts: tuple[str, ...]) -> Any:
    from bertstudio.core.tasks.multiple_choice import ChoiceInput

    _count(texts, 3, None, "a prompt and two or more endings", 'Use --prompt "..." --choice "..." --choice "...".')
    return ChoiceInput(texts[0], tuple(texts[1:]))


def multiple_choice_target(result: Any) -> str | None:
    """The best ending's index in the order given."""
    choices = getattr(result, "choices", ())
    return str(choices[0].index) if choices else None
