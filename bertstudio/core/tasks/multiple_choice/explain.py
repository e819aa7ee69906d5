"""Explain for Multiple choice: the prompt and its endings (1 x choices x tokens), F = P(ending)."""

from __future__ import annotations

from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.explain.inputs import count_parts
from bertstudio.core.explain.targets import Prepared, finish, outputs_of, whole_number
from bertstudio.core.models import LoadedModel
from bertstudio.core.tasks.multiple_choice import ChoiceInput, ChoiceResult, preprocess, steps
from bertstudio.core.text_limits import require_text


def texts_of(inputs: Any) -> tuple[str, ...]:
    return (str(inputs.prompt), *(str(c) for c in inputs.choices))


def inputs_of(texts: tuple[str, ...]) -> ChoiceInput:
    count_parts(texts, 3, None, "a prompt and two or more endings", 'Use --prompt "..." --choice "..." --choice "...".')
    return ChoiceInput(texts[0], tuple(texts[1:]))


def target_of(result: Any) -> str | None:
    """The best ending's index in the order given."""
    choices = getattr(result, "choices", ())
    return str(choices[0].index) if choices else None


def prepare(loaded: LoadedModel, texts: tuple[str, ...], target: str | None) -> Prepared:
    """texts = (prompt, ending, ending, ...); inputs 1 x choices x tokens; --target = choice index or text."""
    require_text(texts[0], "prompt")
    choices = [c.strip() for c in texts[1:]]
    if len(choices) < 2 or not all(choices):
        raise InputError("Multiple choice needs at least two non-empty endings.")
    inputs, _ = preprocess(loaded, texts[0], choices)
    inputs = {n: inputs[n] for n in ("input_ids", "attention_mask", "token_type_ids") if n in inputs}
    if target is None:
        index = int(outputs_of(loaded, inputs).logits[0].argmax())
    elif target in choices:
        index = choices.index(target)
    elif (number := whole_number(target)) is not None and number < len(choices):
        index = number
    else:
        raise InputError(f"Unknown choice {target!r}.", hint=f"Give an index 0-{len(choices) - 1} or an ending.")

    def probability(outputs: Any) -> Any:
        return steps.read(loaded, outputs.logits)[:, index]

    return finish(loaded, inputs, tuple((texts[0], c) for c in choices), target=index,
                   target_label=f"P('{choices[index]}')",
                   probability=probability, targets=tuple((str(i), c) for i, c in enumerate(choices)))


def summary(result: ChoiceResult) -> str:
    return "\n".join(f"{c.score:7.2%}  {c.choice}" for c in result.choices)
