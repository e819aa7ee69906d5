"""What is explained, per task: the model inputs, the tokens, and F = P(target) from the outputs.

Every explanation method needs the same three things from a task: the encoded input (batch 1;
multiple choice: 1 x choices x tokens), the special-token positions the baseline keeps, and a
function of the model's outputs giving the softmax probability of the chosen target, one value
per batch row. Targets follow the CLI contract (issue 13): the predicted label, the top
candidate at the first mask, IsNext, the first entity's first token, the best span's start.
Each task's spec names its function here (`ExplainAdapter.prepare`); `prepare` looks it up, so
what differs per task (a task's own loss, one sequence per choice) travels on `Prepared`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.limits import as_int
from bertstudio.core.models import LoadedModel
from bertstudio.core.text_limits import require_text


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


def _finish(loaded: LoadedModel, inputs: dict[str, Any], texts: tuple[tuple[str, ...], ...] = (),
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


def _wide(values: Any) -> Any:
    """Half precision widened to float32 for the softmax; float64 stays (exact references in tests)."""
    return values if values.dtype.is_floating_point and values.element_size() >= 4 else values.float()


def _encode(loaded: LoadedModel, first: str, second: str | None = None) -> dict[str, Any]:
    import torch

    encoding = loaded.tokenizer(first, second, truncation=True, max_length=loaded.info.max_length)
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in encoding]
    return {n: torch.tensor([encoding[n]], device=loaded.model.device) for n in names}


def _logits(loaded: LoadedModel, inputs: dict[str, Any]) -> Any:
    import torch

    with torch.inference_mode():
        return loaded.model(**inputs)


def _number(target: str) -> int | None:
    """`target` as a whole number if it is one in ASCII digits ("²" is a digit to str.isdigit, not to int)."""
    text = target.strip()
    if not (text.isascii() and text.isdigit()):
        return None
    try:
        return as_int(text, "The target")
    except InputError:
        return None


def _token_id(loaded: LoadedModel, target: str, size: int) -> int:
    """A vocabulary token for --target: a token id below `size`, the token itself, or a word that is one token."""
    tokenizer = loaded.tokenizer
    number = _number(target)
    if number is not None:
        if number >= size:
            raise InputError(f"Token id {number:,} is not in this model's vocabulary (ids 0-{size - 1:,}).",
                             hint="Choose one of the fill-mask candidates.")
        return number
    vocab = tokenizer.get_vocab()
    if target in vocab:
        return int(vocab[target])
    for text in (" " + target, target):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(ids) == 1 and ids[0] != tokenizer.unk_token_id:  # unknown text is one token too: [UNK]
            return int(ids[0])
    raise InputError(f"'{target}' is not one token of this model's vocabulary, so it cannot be a mask's target.",
                     hint="Choose one of the fill-mask candidates.")


def fill_mask(loaded: LoadedModel, texts: tuple[str, ...], target: str | None) -> Prepared:
    from bertstudio.core.tasks.fill_mask import in_mask_of

    text = in_mask_of(loaded, texts[0])
    require_text(text)
    inputs = _encode(loaded, text)
    tokenizer = loaded.tokenizer
    positions = (inputs["input_ids"][0] == tokenizer.mask_token_id).nonzero().flatten().tolist()
    if not positions:
        raise InputError(f"The text has no mask token. Put {tokenizer.mask_token} where a word should be predicted.")
    position = positions[0]
    probabilities = _logits(loaded, inputs).logits[0, position].float().softmax(-1)
    top = probabilities.topk(min(10, probabilities.numel()))
    token_id = _token_id(loaded, target, probabilities.numel()) if target else int(top.indices[0])
    word = str(tokenizer.decode([token_id])).strip()

    def probability(outputs: Any) -> Any:
        return _wide(outputs.logits[:, position]).softmax(-1)[:, token_id]

    choices = tuple((str(int(i)), str(tokenizer.decode([int(i)])).strip()) for i in top.indices)
    return _finish(loaded, inputs, ((text,),), target=word, target_label=f"P('{word}' at mask 1)",
                   probability=probability, targets=choices, fixed=(position,))


def nsp(loaded: LoadedModel, texts: tuple[str, ...], target: str | None) -> Prepared:
    from bertstudio.core.tasks.nsp import require_nsp_head

    require_nsp_head(loaded)
    if len(texts) != 2:
        raise InputError("Next-sentence prediction is explained for one pair: sentence A and sentence B.")
    require_text(texts[0], "sentence A")
    require_text(texts[1], "sentence B")
    wanted = (target or "is_next").lower().replace("-", "_")
    if wanted not in ("is_next", "not_next"):
        raise InputError(f"Unknown NSP target {target!r}.", hint="Use is_next or not_next.")
    label = 0 if wanted == "is_next" else 1
    inputs = _encode(loaded, texts[0], texts[1])

    def probability(outputs: Any) -> Any:
        return _wide(outputs.logits).softmax(-1)[:, label]

    return _finish(loaded, inputs, ((texts[0], texts[1]),), target=wanted,
                   target_label="P(IsNext)" if label == 0 else "P(NotNext)", probability=probability,
                   targets=(("is_next", "IsNext"), ("not_next", "NotNext")))


def ner(loaded: LoadedModel, texts: tuple[str, ...], target: str | None) -> Prepared:
    """--target INDEX or INDEX:LABEL (a position of input_ids, as the pipeline's `index`)."""
    require_text(texts[0])
    inputs = _encode(loaded, texts[0])
    labels = loaded.info.id2label or {i: str(i) for i in range(int(loaded.model.config.num_labels or 0))}
    predicted = _logits(loaded, inputs).logits[0].argmax(-1).tolist()
    tokens = loaded.tokenizer.convert_ids_to_tokens(inputs["input_ids"][0].tolist())
    structural = structural_ids(loaded.tokenizer)
    ordinary = [i for i, t in enumerate(inputs["input_ids"][0].tolist()) if t not in structural]
    entities = [i for i in ordinary if labels.get(predicted[i], "O") != "O"]
    if target:
        where, _, name = str(target).partition(":")
        index = _number(where)
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
        return _wide(outputs.logits[:, position]).softmax(-1)[:, label]

    def loss(outputs: Any) -> Any:  # token classification's loss against the model's own tags
        import torch

        logits = _wide(outputs.logits[:, ordinary])
        own = torch.tensor([predicted[i] for i in ordinary], device=logits.device).expand(logits.shape[0], -1)
        return torch.nn.functional.cross_entropy(logits.transpose(1, 2), own)

    choices = tuple((f"{i}:{labels[predicted[i]]}", f"{tokens[i]} ({labels[predicted[i]]})") for i in entities)
    return _finish(loaded, inputs, ((texts[0],),), target=f"{position}:{labels[label]}",
                   target_label=f"P({labels[label]} at '{tokens[position]}')", probability=probability,
                   targets=choices, loss=loss, loss_name="token cross-entropy against the model's own tags",
                   fixed=(position,))


def qa(loaded: LoadedModel, texts: tuple[str, ...], target: str | None) -> Prepared:
    """The window holding the best span; F = the start (or end) probability among context and CLS."""
    import numpy as np
    import torch

    from bertstudio.core.tasks import qa as task

    if len(texts) != 2:
        raise InputError("Question answering is explained for a question and a context.")
    which = (target or "start").lower()
    if which not in ("start", "end"):
        raise InputError(f"Unknown QA target {target!r}.", hint="Use start or end (of the best answer).")
    options = task.QAOptions()
    features = task.preprocess(loaded.tokenizer, texts[0], texts[1], options, loaded.info.max_length)
    start_logits, end_logits = task.forward(loaded.model, features)
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
        raw = _wide(outputs.start_logits if which == "start" else outputs.end_logits)
        return raw.masked_fill(~allowed, float("-inf")).softmax(-1)[:, position]

    question = texts[0].strip()
    read = (question, texts[1]) if task.question_first_in(loaded.tokenizer) else (texts[1], question)
    return _finish(loaded, inputs, (read,), target=which, target_label=f"P({which} of '{best.answer}')",
                   probability=probability, targets=(("start", "answer start"), ("end", "answer end")),
                   fixed=(position,))


def classification(loaded: LoadedModel, texts: tuple[str, ...], target: str | None) -> Prepared:
    from bertstudio.core.tasks.classification import score_kind

    require_text(texts[0])
    pair = texts[1] if len(texts) > 1 and texts[1].strip() else None
    inputs = _encode(loaded, texts[0], pair)
    config = loaded.model.config
    kind = score_kind(config)
    labels = {int(k): str(v) for k, v in (config.id2label or {}).items()} or {0: "score"}
    if target is None:  # a handed-over result names its label: no forward pass just for the argmax
        label = int(_logits(loaded, inputs).logits[0].float().argmax())
    else:
        by_name = {v: k for k, v in labels.items()}
        if target in by_name:
            label = by_name[target]
        elif (number := _number(target)) is not None and number in labels:
            label = number
        else:
            raise InputError(f"Unknown label {target!r}.", hint=f"Labels: {', '.join(labels.values())}.")

    def probability(outputs: Any) -> Any:
        raw = _wide(outputs.logits)
        if kind == "regression":
            return raw[:, label]
        return (raw.sigmoid() if kind == "multi-label" else raw.softmax(-1))[:, label]

    name = labels.get(label, str(label))
    return _finish(loaded, inputs, ((texts[0], pair) if pair else (texts[0],),), target=name,
                   target_label=f"value of {name}" if kind == "regression" else f"P({name})",
                   probability=probability, targets=tuple((v, v) for _, v in sorted(labels.items())))


def multiple_choice(loaded: LoadedModel, texts: tuple[str, ...], target: str | None) -> Prepared:
    """texts = (prompt, ending, ending, ...); inputs 1 x choices x tokens; --target = choice index or text."""
    from bertstudio.core.tasks.multiple_choice import preprocess

    require_text(texts[0], "prompt")
    choices = [c.strip() for c in texts[1:]]
    if len(choices) < 2 or not all(choices):
        raise InputError("Multiple choice needs at least two non-empty endings.")
    inputs, _ = preprocess(loaded, texts[0], choices)
    inputs = {n: inputs[n] for n in ("input_ids", "attention_mask", "token_type_ids") if n in inputs}
    if target is None:
        index = int(_logits(loaded, inputs).logits[0].argmax())
    elif target in choices:
        index = choices.index(target)
    elif (number := _number(target)) is not None and number < len(choices):
        index = number
    else:
        raise InputError(f"Unknown choice {target!r}.", hint=f"Give an index 0-{len(choices) - 1} or an ending.")

    def probability(outputs: Any) -> Any:
        return _wide(outputs.logits).softmax(-1)[:, index]

    return _finish(loaded, inputs, tuple((texts[0], c) for c in choices), target=index,
                   target_label=f"P('{choices[index]}')",
                   probability=probability, targets=tuple((str(i), c) for i, c in enumerate(choices)))


def prepare(loaded: LoadedModel, task: str, texts: tuple[str, ...], target: str | None = None) -> Prepared:
    """The task's own preparation, named by its spec (`ExplainAdapter.prepare`)."""
    from bertstudio.core.explain.inputs import adapter_for

    adapter = adapter_for(task)
    if not texts:
        raise InputError("Nothing to explain: the input is empty.")
    return replace(adapter.prepare(loaded, tuple(texts), target), task=task)
