"""Explain for Question answering: the question and context, F = P(start) (or end) of the best span
in the window that holds it, among the context and the first token."""

from __future__ import annotations

from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.explain.inputs import count_parts
from bertstudio.core.explain.targets import Prepared, finish, wide
from bertstudio.core.models import LoadedModel
from bertstudio.core.tasks import qa as task
from bertstudio.core.tasks.qa import QAInput, QAResult


def texts_of(inputs: Any) -> tuple[str, ...]:
    return (str(inputs.question), str(inputs.context))


def inputs_of(texts: tuple[str, ...]) -> QAInput:
    count_parts(texts, 2, 2, "a question and a context", 'Use --question "..." --context "...".')
    return QAInput(texts[0], texts[1])


def target_of(_result: Any) -> str | None:
    """The best answer's start, the default (its span is found again in the window explained)."""
    return None


def prepare(loaded: LoadedModel, texts: tuple[str, ...], target: str | None) -> Prepared:
    """The window holding the best span; F = the start (or end) probability among context and CLS."""
    import numpy as np
    import torch

    if len(texts) != 2:
        raise InputError("Question answering is explained for a question and a context.")
    which = (target or "start").lower()
    if which not in ("start", "end"):
        raise InputError(f"Unknown QA target {target!r}.", hint="Use start or end (of the best answer).")
    options = task.QAOptions()
    features = task.preprocess(loaded.tokenizer, texts[0], texts[1], options, loaded.info.max_length)
    (start_logits,), (end_logits,) = task.window_logits(loaded, [features], progress=False)
    answers, _, _ = task.postprocess(features, start_logits, end_logits, texts[1], options)
    if not answers:
        raise InputError("The model found no answer span to explain.")
    best = answers[0]
    window = best.window
    allowed = torch.as_tensor(features.allowed[window], device=loaded.model.device)
    context = features.context_mask[window]
    if which == "start":
        logits, chars = start_logits[window], features.char_start[window]
        position = int(np.argmax(np.where(context & (chars == best.start), logits, -np.inf)))
    else:
        logits, chars = end_logits[window], features.char_end[window]
        position = int(np.argmax(np.where(context & (chars == best.end), logits, -np.inf)))
    inputs = {n: torch.as_tensor(v[window:window + 1], device=loaded.model.device)
              for n, v in features.inputs.items()}

    def probability(outputs: Any) -> Any:
        raw = wide(outputs.start_logits if which == "start" else outputs.end_logits)
        return raw.masked_fill(~allowed, float("-inf")).softmax(-1)[:, position]

    question = texts[0].strip()
    read = (question, texts[1]) if task.question_first_in(loaded.tokenizer) else (texts[1], question)
    return finish(loaded, inputs, (read,), target=which, target_label=f"P({which} of '{best.answer}')",
                   probability=probability, targets=(("start", "answer start"), ("end", "answer end")),
                   fixed=(position,))


def summary(result: QAResult) -> str:
    return "\n".join(f"{a.score:7.2%}  {a.answer or '(no answer)'}" for a in result.answers)
