"""Explain for Next sentence: sentence A and B, the label the pair was given, F = P(IsNext) or P(NotNext)."""

from __future__ import annotations

from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.explain.inputs import count_parts
from bertstudio.core.explain.targets import Prepared, encode, finish
from bertstudio.core.models import LoadedModel
from bertstudio.core.tasks.nsp import NspInput, require_nsp_head, steps
from bertstudio.core.text_limits import require_text


def texts_of(inputs: Any) -> tuple[str, ...]:
    candidates = tuple(getattr(inputs, "candidates", ()) or ())
    second = candidates[0] if candidates else getattr(inputs, "sentence_b", "")
    return (str(inputs.sentence_a), str(second))


def inputs_of(texts: tuple[str, ...]) -> NspInput:
    count_parts(texts, 2, 2, "two sentences: A and B", 'Give sentence A and sentence B: "A" "B".')
    return NspInput(texts[0], tuple(texts[1:]))


def target_of(result: Any) -> str | None:
    """The label the pair was given (ranked candidates carry no single answer: the default, IsNext)."""
    is_next, not_next = getattr(result, "is_next", None), getattr(result, "not_next", None)
    if is_next is None or not_next is None:
        return None
    return "is_next" if is_next >= not_next else "not_next"


def prepare(loaded: LoadedModel, texts: tuple[str, ...], target: str | None) -> Prepared:
    require_nsp_head(loaded)
    if len(texts) != 2:
        raise InputError("Next-sentence prediction is explained for one pair: sentence A and sentence B.")
    require_text(texts[0], "sentence A")
    require_text(texts[1], "sentence B")
    wanted = (target or "is_next").lower().replace("-", "_")
    if wanted not in ("is_next", "not_next"):
        raise InputError(f"Unknown NSP target {target!r}.", hint="Use is_next or not_next.")
    label = 0 if wanted == "is_next" else 1
    inputs = encode(loaded, texts[0], texts[1])

    def probability(outputs: Any) -> Any:
        return steps.read(loaded, outputs.logits)[:, label]

    return finish(loaded, inputs, ((texts[0], texts[1]),), target=wanted,
                   target_label="P(IsNext)" if label == 0 else "P(NotNext)", probability=probability,
                   targets=(("is_next", "IsNext"), ("not_next", "NotNext")))


def summary(result: Any) -> str:
    first = result.results[0] if hasattr(result, "results") else result
    return f"P(IsNext) = {first.is_next:.2%}\nP(NotNext) = {first.not_next:.2%}"
