"""Between a task's own input dataclass and the plain texts the explanations take.

A task tab's "Explain…" hands over its spec's input (FillMaskInput, QAInput...); the Explain tab
can also be used on its own with typed text. Both directions live here, so the tab and the CLI
agree on what "the input" of each task is: fill-mask/ner (text,), nsp (A, B), qa (question,
context), classification (text[, pair]), multiple-choice (prompt, ending, ending...).
"""

from __future__ import annotations

from typing import Any

from bertstudio.core.errors import InputError

PARTS = {
    "fill-mask": "the text with a mask",
    "nsp": "sentence A, then sentence B",
    "ner": "the text",
    "qa": "the question, then the context",
    "classification": "the text (and its pair on a second line)",
    "multiple-choice": "the prompt, then one ending per line",
}


def texts_of(task: str, inputs: Any) -> tuple[str, ...]:
    """The texts of a task's input dataclass (the first row or candidate where there are several)."""
    if task == "nsp":
        candidates = tuple(getattr(inputs, "candidates", ()) or ())
        second = candidates[0] if candidates else getattr(inputs, "sentence_b", "")
        return (str(inputs.sentence_a), str(second))
    if task == "qa":
        return (str(inputs.question), str(inputs.context))
    if task == "multiple-choice":
        return (str(inputs.prompt), *(str(c) for c in inputs.choices))
    if task == "classification":
        if getattr(inputs, "texts", None):
            return (str(inputs.texts[0]),)
        pair = getattr(inputs, "pair", None)
        return (str(inputs.text), str(pair)) if pair else (str(inputs.text),)
    text = getattr(inputs, "text", None)
    if text is None:
        raise InputError(f"This {task} input cannot be explained.")
    return (str(text),)


def task_inputs(task: str, texts: tuple[str, ...]) -> Any:
    """The task's own input dataclass from texts (for running the task itself, e.g. heads pruned)."""
    if task == "fill-mask":
        from bertstudio.core.tasks.fill_mask import FillMaskInput

        return FillMaskInput(texts[0])
    if task == "nsp":
        from bertstudio.core.tasks.nsp import NspInput

        return NspInput(texts[0], tuple(texts[1:]))
    if task == "ner":
        from bertstudio.core.tasks.ner import NerInput

        return NerInput(texts[0], views=False)
    if task == "qa":
        from bertstudio.core.tasks.qa import QAInput

        return QAInput(texts[0], texts[1] if len(texts) > 1 else "")
    if task == "classification":
        from bertstudio.core.tasks.classification import ClassificationInput

        return ClassificationInput(texts[0], texts[1] if len(texts) > 1 else None)
    if task == "multiple-choice":
        from bertstudio.core.tasks.multiple_choice import ChoiceInput

        return ChoiceInput(texts[0], tuple(texts[1:]))
    raise InputError(f"{task} cannot be explained.")


def split_lines(task: str, text: str) -> tuple[str, ...]:
    """Typed input, one part per line (classification and fill-mask keep a single text whole)."""
    lines = tuple(line.strip() for line in text.splitlines() if line.strip())
    if task in ("fill-mask", "ner"):
        return (" ".join(lines),) if lines else ()
    return lines


def targets_of(task: str, result: Any) -> tuple[tuple[str, str], ...]:
    """(value for `target`, label) a person may choose from a task's result; () when unknown."""
    try:
        if task == "fill-mask":
            return tuple((c.token, f"{c.token} ({c.score:.1%})") for c in result.masks[0].candidates)
        if task == "classification":
            return tuple((s.label, f"{s.label} ({s.score:.1%})") for s in result.first.scores)
        if task == "multiple-choice":
            return tuple((str(c.index), f"{c.choice} ({c.score:.1%})") for c in result.choices)
        if task == "nsp":
            return (("is_next", "IsNext"), ("not_next", "NotNext"))
        if task == "qa":
            return (("start", "answer start"), ("end", "answer end"))
    except (AttributeError, IndexError):
        return ()
    return ()
