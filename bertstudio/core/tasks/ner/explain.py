"""Explain for NER: its one text, F = P(tag) at one token (by default the first entity's first token)
and, for head importance, the token cross-entropy against the model's own tags."""

from __future__ import annotations

from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.explain.inputs import count_parts, text_of
from bertstudio.core.explain.targets import Prepared, encode, finish, outputs_of, structural_ids, whole_number, wide
from bertstudio.core.models import LoadedModel
from bertstudio.core.tasks.ner import NerInput, NerResult
from bertstudio.core.text_limits import require_text


def texts_of(inputs: Any) -> tuple[str, ...]:
    return text_of(inputs)


def inputs_of(texts: tuple[str, ...]) -> NerInput:
    count_parts(texts, 1, 1, "one text", 'Give the text as one INPUT (quoted).')
    return NerInput(texts[0], views=False)


def target_of(_result: Any) -> str | None:
    """The default (the first entity's first token) is the result's own: its tags need the forward anyway."""
    return None


def prepare(loaded: LoadedModel, texts: tuple[str, ...], target: str | None) -> Prepared:
    """--target INDEX or INDEX:LABEL (a position of input_ids, as the pipeline's `index`)."""
    require_text(texts[0])
    inputs = encode(loaded, texts[0])
    labels = loaded.info.id2label or {i: str(i) for i in range(int(loaded.model.config.num_labels or 0))}
    predicted = outputs_of(loaded, inputs).logits[0].argmax(-1).tolist()
    tokens = loaded.tokenizer.convert_ids_to_tokens(inputs["input_ids"][0].tolist())
    structural = structural_ids(loaded.tokenizer)
    ordinary = [i for i, t in enumerate(inputs["input_ids"][0].tolist()) if t not in structural]
    entities = [i for i in ordinary if labels.get(predicted[i], "O") != "O"]
    if target:
        where, _, name = str(target).partition(":")
        index = whole_number(where)
        if index is None or not 0 <= index < len(tokens):
            raise InputError(f"NER target {target!r} is not a token index 0-{len(tokens) - 1}.",
                             hint="Give INDEX or INDEX:LABEL (index as in `bertstudio ner --aggregation none`).")
        position = index
        by_name = {v: k for k, v in labels.items()}
        if name and name not in by_name:
            raise InputError(f"Unknown label {name!r}.", hint=f"Labels: {', '.join(labels.values())}.")
        label = by_name[name] if name else predicted[position]
    else:
        position = entities[0] if entities else (ordinary[0] if ordinary else 0)
        label = predicted[position]

    def probability(outputs: Any) -> Any:
        return wide(outputs.logits[:, position]).softmax(-1)[:, label]

    def loss(outputs: Any) -> Any:  # token classification's loss against the model's own tags
        import torch

        logits = wide(outputs.logits[:, ordinary])
        own = torch.tensor([predicted[i] for i in ordinary], device=logits.device).expand(logits.shape[0], -1)
        return torch.nn.functional.cross_entropy(logits.transpose(1, 2), own)

    choices = tuple((f"{i}:{labels[predicted[i]]}", f"{tokens[i]} ({labels[predicted[i]]})") for i in entities)
    return finish(loaded, inputs, ((texts[0],),), target=f"{position}:{labels[label]}",
                   target_label=f"P({labels[label]} at '{tokens[position]}')", probability=probability,
                   targets=choices, loss=loss, loss_name="token cross-entropy against the model's own tags",
                   fixed=(position,))


def summary(result: NerResult) -> str:
    return "\n".join(f"{e.score:7.2%}  {e.label}  {e.word}" for e in result.entities) or "no entities"
