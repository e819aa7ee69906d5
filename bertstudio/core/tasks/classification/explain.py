"""Explain for Classification: its texts (one text, or a text and its pair), the target a result
answered, and F = P(label) (sigmoid for a multi-label head, the raw value for a regression head)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.explain.importance import Example
from bertstudio.core.explain.inputs import count_parts
from bertstudio.core.explain.targets import Prepared, encode, finish, outputs_of, whole_number
from bertstudio.core.models import LoadedModel
from bertstudio.core.tasks.classification import (
    ClassificationInput,
    ClassificationResult,
    read_texts,
    steps,
    table_columns,
)
from bertstudio.core.tasks.classification.steps import score_kind
from bertstudio.core.text_limits import require_text


def texts_of(inputs: Any) -> tuple[str, ...]:
    if getattr(inputs, "texts", None):
        return (str(inputs.texts[0]),)
    if not hasattr(inputs, "text"):  # a batch read from a file: its rows are not in the input
        raise InputError("A file's rows are explained one at a time.",
                         hint="Classify the row as one text, or explain the file's rows in the Evaluate tab.")
    pair = getattr(inputs, "pair", None)
    return (str(inputs.text), str(pair)) if pair else (str(inputs.text),)


def inputs_of(texts: tuple[str, ...]) -> ClassificationInput:
    count_parts(texts, 1, 2, "a text, or a text and its pair", '"TEXT" [--pair "B"]')
    return ClassificationInput(texts[0], texts[1] if len(texts) > 1 else None)


def target_of(result: Any) -> str | None:
    """The first row's top label (the row `texts_of` explains)."""
    rows = getattr(result, "rows", ())
    return str(rows[0].top.label) if rows and rows[0].scores else None


def prepare(loaded: LoadedModel, texts: tuple[str, ...], target: str | None) -> Prepared:
    require_text(texts[0])
    pair = texts[1] if len(texts) > 1 and texts[1].strip() else None
    inputs = encode(loaded, texts[0], pair)
    config = loaded.model.config
    kind = score_kind(config)
    labels = {int(k): str(v) for k, v in (config.id2label or {}).items()} or {0: "score"}
    if target is None:  # a handed-over result names its label: no forward pass just for the argmax
        label = int(outputs_of(loaded, inputs).logits[0].float().argmax())
    else:
        by_name = {v: k for k, v in labels.items()}
        if target in by_name:
            label = by_name[target]
        elif (number := whole_number(target)) is not None and number in labels:
            label = number
        else:
            raise InputError(f"Unknown label {target!r}.", hint=f"Labels: {', '.join(labels.values())}.")

    def probability(outputs: Any) -> Any:
        return steps.read(loaded, outputs.logits)[:, label]

    name = labels.get(label, str(label))
    return finish(loaded, inputs, ((texts[0], pair) if pair else (texts[0],),), target=name,
                  target_label=f"value of {name}" if kind == "regression" else f"P({name})",
                  probability=probability, targets=tuple((v, v) for _, v in sorted(labels.items())))


def summary(result: ClassificationResult) -> str:
    return "\n".join(f"{s.score:7.2%}  {s.label}" for s in result.first.scores)


def examples(path: str | Path) -> list[Example]:
    """A CSV/TSV (text[, text pair][, label] columns, as the training data); with a label column
    the loss is against the gold labels."""
    from bertstudio.core.training.data import LABEL_NAMES, read_labelled

    path = Path(path)
    header = table_columns(path)
    if len(header) > 1 and any(name.lower() in LABEL_NAMES for name in header):
        data = read_labelled(path)
        pairs = data.pairs or ("",) * len(data)
        return [Example((t, p) if p else (t,), label)
                for t, p, label in zip(data.texts, pairs, data.labels, strict=True)]
    return [Example((text,)) for text in read_texts(path) if text.strip()]
