"""Fill-mask: the top-k candidates for every mask token, equal to transformers' FillMaskPipeline.

The pipeline does the numbers; we add what it lacks for a person: clear errors, a visible
truncation warning, several masks located in the text, and the sentence with the best
candidates filled in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bertstudio.core import engine, execution
from bertstudio.core.errors import InputError, MissingHeadError
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl
from bertstudio.core.text_limits import Truncation, require_text

MAX_TOP_K = 100


@dataclass(frozen=True)
class FillMaskInput:
    text: str  # with one or more mask tokens
    top_k: int = 5


@dataclass(frozen=True)
class Candidate:
    token: str  # the token as the tokenizer decodes it alone (pipeline's `token_str`)
    token_id: int
    score: float

    def to_json(self) -> dict[str, object]:
        return {"token": self.token, "token_id": self.token_id, "score": self.score}


@dataclass(frozen=True)
class MaskPrediction:
    """Candidates for one mask, best first; `start`/`end` locate the mask in the text."""

    start: int
    end: int
    candidates: tuple[Candidate, ...]


@dataclass(frozen=True)
class FillMaskResult:
    text: str  # the text the model read (after any truncation)
    masks: tuple[MaskPrediction, ...]
    filled_text: str  # every mask replaced by its best candidate
    filled_spans: tuple[tuple[int, int], ...]  # where the best candidates sit in filled_text
    truncation: Truncation | None = None

    @property
    def notes(self) -> tuple[Note, ...]:
        return execution.truncation_notes(self.truncation)

    def to_json(self) -> list[list[dict[str, object]]]:
        return [[c.to_json() for c in mask.candidates] for mask in self.masks]


def _mask_spans(encoding: Any, mask_id: int, within: int) -> list[tuple[int, int]]:
    """Character spans of the mask tokens that end within the first `within` characters."""
    return [
        (start, end)
        for token_id, (start, end) in zip(encoding["input_ids"], encoding["offset_mapping"], strict=True)
        if token_id == mask_id and end <= within
    ]


def _fill(text: str, spans: list[tuple[int, int]], words: list[str]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Replace each mask span by a candidate, gluing wordpiece continuations ('##s') on."""
    pieces, filled_spans, cursor, length = [], [], 0, 0
    for (start, end), word in zip(spans, words, strict=True):
        before = text[cursor:start]
        word = word.strip()
        if word.startswith("##"):
            word, before = word[2:], before.rstrip(" ")
        pieces.append(before)
        length += len(before)
        filled_spans.append((length, length + len(word)))
        pieces.append(word)
        length += len(word)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), tuple(filled_spans)


def predict(loaded: LoadedModel, text: str, top_k: int = 5) -> FillMaskResult:
    """Top-k candidates per mask; errors a user understands for every input that cannot work."""
    info = loaded.info
    tokenizer = loaded.tokenizer
    require_text(text)
    if tokenizer.mask_token is None:
        raise MissingHeadError(f"{info.architecture}'s tokenizer has no mask token, so it cannot fill masks.")
    if not 1 <= top_k <= MAX_TOP_K:
        raise InputError(f"top-k must be between 1 and {MAX_TOP_K}, not {top_k}.")
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    read, truncation = execution.fit(loaded, text, encoding)
    spans = _mask_spans(encoding, tokenizer.mask_token_id, len(read))
    if not spans:
        lost = truncation is not None and _mask_spans(encoding, tokenizer.mask_token_id, len(text))
        raise InputError(
            "The mask was cut off: it lies past the model's maximum length." if lost
            else f"The text has no mask token. Put {tokenizer.mask_token} where a word should be predicted.",
            hint=truncation.message if lost and truncation else "Use “Insert mask” or type the token yourself.",
        )
    raw = engine.run_pipeline(loaded, "fill-mask", read, top_k=top_k)
    per_mask = [raw] if len(spans) == 1 else raw
    masks = tuple(
        MaskPrediction(
            start=start,
            end=end,
            candidates=tuple(Candidate(c["token_str"], int(c["token"]), float(c["score"])) for c in candidates),
        )
        for (start, end), candidates in zip(spans, per_mask, strict=True)
    )
    filled_text, filled_spans = _fill(read, spans, [m.candidates[0].token for m in masks])
    return FillMaskResult(
        text=read,
        masks=masks,
        filled_text=filled_text,
        filled_spans=filled_spans,
        truncation=truncation,
    )


def in_mask_of(loaded: LoadedModel, text: str) -> str:
    """`text` with any BERT-family mask token ([MASK], <mask>) written as this model's own."""
    mask = loaded.tokenizer.mask_token
    if not mask:
        return text
    for other in ("[MASK]", "<mask>"):
        if other != mask:
            text = text.replace(other, mask)
    return text


def compare(a: FillMaskResult, b: FillMaskResult) -> tuple[Any, ...]:
    """One RankingDiff per mask (top-1 change, score deltas), model A -> model B."""
    from bertstudio.core.compare import compare_ranking_lists

    return compare_ranking_lists([m.candidates for m in a.masks], [m.candidates for m in b.masks])


def run(loaded: LoadedModel, inputs: FillMaskInput, control: TaskControl) -> FillMaskResult:
    return predict(loaded, inputs.text, inputs.top_k)


def inputs_for(loaded: LoadedModel, inputs: FillMaskInput) -> FillMaskInput:
    return FillMaskInput(in_mask_of(loaded, inputs.text), inputs.top_k)


# Trace why's Copy as Python: how its script reads P(target) from the outputs (the clean prediction).
PATCH_READER = (
    "MASK = int((clean['input_ids'][0] == tokenizer.mask_token_id).nonzero()[0])\n"
    '\n'
    '\n'
    'def probability(outputs):\n'
    '    return outputs.logits[0, MASK].softmax(-1)[TOKEN]\n'
    '\n'
    '\n'
    '\n'
    '\n'
    'def token_of(word):  # the chosen target word, as the app reads it: a vocabulary entry, else one token\n'
    '    vocabulary = tokenizer.get_vocab()\n'
    '    if word in vocabulary:\n'
    '        return int(vocabulary[word])\n'
    "    for text in (' ' + word, word):\n"
    "        ids = tokenizer(text, add_special_tokens=False)['input_ids']\n"
    '        if len(ids) == 1:\n'
    '            return int(ids[0])\n'
    "    raise SystemExit(f'{word!r} is not one token of this model')\n"
    '\n'
    '\n'
    'TOKEN = token_of(TARGET)\n'
)
