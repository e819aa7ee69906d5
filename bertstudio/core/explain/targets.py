"""What is explained, per task: the model inputs, the tokens, and F = P(target) from the outputs.

Every explanation method needs the same three things from a task: the encoded input (batch 1;
multiple choice: 1 x choices x tokens), the special-token positions the baseline keeps, and a
function of the model's outputs giving the softmax probability of the chosen target, one value
per batch row. Targets follow the CLI contract (issue 13): the predicted label, the top
candidate at the first mask, IsNext, the first entity's first token, the best span's start.
Each task's package has its own (core/tasks/<task>/explain.py, named by `ExplainAdapter.prepare`);
`prepare` asks the spec, so what differs per task (a task's own loss, one sequence per choice)
travels on `Prepared`. The helpers here are what those share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.limits import as_int
from bertstudio.core.models import LoadedModel


@dataclass(frozen=True)
class Prepared:
    """One input, ready to explain: model inputs, tokens and F (probability of the target)."""

    task: str  # the spec's key, set by `prepare` (the per-task functions do not name it)
    inputs: dict[str, Any]  # tensors on the model's device; input_ids first
    tokens: tuple[str, ...]  # every position of input_ids, flattened (padding included)
    keep: tuple[int, ...]  # flat positions a person sees (attention_mask == 1)
    special: tuple[bool, ...]  # per flat position: a structural special token, kept in the baseline ([UNK] is a word)
    rows: tuple[int, ...]  # per flat position: which sequence (multiple choice: the choice)
    target: Any  # JSON form of the target
    target_label: str  # what a person reads: "P(positive)", "P('paris' at mask 1)"
    probability: Callable[[Any], Any]  # model outputs -> (batch,) probabilities of the target
    targets: tuple[tuple[str, str], ...] = ()  # (value for --target, label) a person may choose from
    loss: Callable[[Any], Any] | None = None  # head importance: the task's own loss, when not -log F
    loss_name: str = "cross-entropy against the model's own prediction"  # what `loss` (or -log F) is
    fixed: tuple[int, ...] = ()  # flat positions F reads (the mask, NER's token, QA's start/end): never deleted

    @property
    def sequences(self) -> int:
        """How many sequences the input holds (multiple choice: one per choice; else 1)."""
        return self.rows[-1] + 1 if self.rows else 1


def structural_ids(tokenizer: Any) -> set[int]:
    """The special tokens that are structure ([CLS], [SEP], [PAD], <s>, </s>, [MASK]): kept as they
    are in every baseline and given no attribution. [UNK] is not among them: it stands for words
    of the input (the topic classifier's vocabulary has no "."), which are attributed like any other."""
    return set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}


def finish(loaded: LoadedModel, inputs: dict[str, Any], texts: tuple[tuple[str, ...], ...] = (),
            **fields: Any) -> Prepared:
    """`texts`: per sequence (row) the text(s) it was encoded from, so [UNK] shows what it stands for."""
    from bertstudio.core.explain.unknown import unknown_labels

    tokenizer = loaded.tokenizer
    ids = inputs["input_ids"]
    flat = ids.reshape(-1).tolist()
    width = ids.shape[-1]
    mask = inputs.get("attention_mask")
    attended = mask.reshape(-1).tolist() if mask is not None else [1] * len(flat)
    structural = structural_ids(tokenizer)
    tokens = list(tokenizer.convert_ids_to_tokens(flat))
    for row, row_texts in enumerate(texts):
        start = row * width
        shown = [i for i in range(start, start + width) if attended[i]]
        for position, label in unknown_labels(tokenizer, [flat[i] for i in shown], row_texts).items():
            tokens[shown[position]] = label
    return Prepared(
        task="", inputs=inputs, tokens=tuple(tokens),
        keep=tuple(i for i, a in enumerate(attended) if a), special=tuple(t in structural for t in flat),
        rows=tuple(i // width for i in range(len(flat))), **fields,
    )


def wide(values: Any) -> Any:
    """Half precision widened to float32 for the softmax; float64 stays (exact references in tests)."""
    return values if values.dtype.is_floating_point and values.element_size() >= 4 else values.float()


def encode(loaded: LoadedModel, first: str, second: str | None = None) -> dict[str, Any]:
    import torch

    encoding = loaded.tokenizer(first, second, truncation=True, max_length=loaded.info.max_length)
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in encoding]
    return {n: torch.tensor([encoding[n]], device=loaded.model.device) for n in names}


def outputs_of(loaded: LoadedModel, inputs: dict[str, Any]) -> Any:
    from bertstudio.core import engine

    with engine.exclusive(loaded) as model:
        return model(**inputs)


def whole_number(target: str) -> int | None:
    """`target` as a whole number if it is one in ASCII digits ("²" is a digit to str.isdigit, not to int)."""
    text = target.strip()
    if not (text.isascii() and text.isdigit()):
        return None
    try:
        return as_int(text, "The target")
    except InputError:
        return None


def prepare(loaded: LoadedModel, task: str, texts: tuple[str, ...], target: str | None = None) -> Prepared:
    """The task's own preparation, found through its spec (`ExplainAdapter.prepare`)."""
    from bertstudio.core.tasks.spec import ExplainAdapter, adapter_for

    adapter = adapter_for(task, ExplainAdapter)
    if not texts:
        raise InputError("Nothing to explain: the input is empty.")
    return replace(adapter.prepare(loaded, tuple(texts), target), task=task)
