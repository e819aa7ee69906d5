"""Explain for Fill-mask: its one text, the top candidate a result found, and F = P(token at the
first mask); its head is also read at every layer (layers.py)."""

from __future__ import annotations

from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.explain.inputs import count_parts, text_of
from bertstudio.core.explain.targets import Prepared, encode, finish, outputs_of, whole_number, wide
from bertstudio.core.models import LoadedModel
from bertstudio.core.tasks.fill_mask import FillMaskInput, FillMaskResult, in_mask_of
from bertstudio.core.text_limits import require_text


def texts_of(inputs: Any) -> tuple[str, ...]:
    return text_of(inputs)


def inputs_of(texts: tuple[str, ...]) -> FillMaskInput:
    count_parts(texts, 1, 1, "one text", 'Give the text with a mask token as one INPUT (quoted).')
    return FillMaskInput(texts[0])


def target_of(result: Any) -> str | None:
    """The top candidate's token id at the first mask (a token, not a word the tokenizer might split)."""
    masks = getattr(result, "masks", ())
    return str(masks[0].candidates[0].token_id) if masks and masks[0].candidates else None


def vocabulary_id(loaded: LoadedModel, target: str, size: int) -> int:
    """A vocabulary token for --target: a token id below `size`, the token itself, or a word that is one token."""
    tokenizer = loaded.tokenizer
    number = whole_number(target)
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


def prepare(loaded: LoadedModel, texts: tuple[str, ...], target: str | None) -> Prepared:
    text = in_mask_of(loaded, texts[0])
    require_text(text)
    inputs = encode(loaded, text)
    tokenizer = loaded.tokenizer
    positions = (inputs["input_ids"][0] == tokenizer.mask_token_id).nonzero().flatten().tolist()
    if not positions:
        raise InputError(f"The text has no mask token. Put {tokenizer.mask_token} where a word should be predicted.")
    position = positions[0]
    probabilities = outputs_of(loaded, inputs).logits[0, position].float().softmax(-1)
    top = probabilities.topk(min(10, probabilities.numel()))
    token_id = vocabulary_id(loaded, target, probabilities.numel()) if target else int(top.indices[0])
    word = str(tokenizer.decode([token_id])).strip()

    def probability(outputs: Any) -> Any:
        return wide(outputs.logits[:, position]).softmax(-1)[:, token_id]

    choices = tuple((str(int(i)), str(tokenizer.decode([int(i)])).strip()) for i in top.indices)
    return finish(loaded, inputs, ((text,),), target=word, target_label=f"P('{word}' at mask 1)",
                   probability=probability, targets=choices, fixed=(position,))


def summary(result: FillMaskResult) -> str:
    return "\n".join(f"{c.score:7.2%}  {c.token}" for c in result.masks[0].candidates)
