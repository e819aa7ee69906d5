"""Layer-L hidden states of every token of many texts, through the batch engine.

`hidden_states[L]` (0 = the embeddings' output, L = the last layer) of every non-padding token,
[CLS] and [SEP] included (they are what the model reads), with where each token came from: its
text, its position, its token and its characters. Held in memory as float32, so the count of
tokens is bounded (MAX_TOKENS).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bertstudio.core.errors import InputError
from bertstudio.core.limits import as_int

if TYPE_CHECKING:
    from bertstudio.core.models import LoadedModel
    from bertstudio.core.progress import TaskControl

# States held at once: 400,000 tokens x 768 floats is 1.2 GB.
MAX_TOKENS = 400_000


@dataclass(frozen=True)
class TokenStates:
    """(N, d) float32 states and, per row, its text, position, token, characters and whether it is special."""

    states: np.ndarray
    text: np.ndarray  # (N,) int32: index into the texts given
    position: np.ndarray  # (N,) int32: the token's place in its text as the model reads it, [CLS] = 0
    tokens: tuple[str, ...]
    spans: np.ndarray  # (N, 2) int32: characters of the token in its text ((0, 0): a special token)
    special: np.ndarray  # (N,) bool
    cut: tuple[int, ...] = ()  # texts longer than the model reads, cut to its length

    def __len__(self) -> int:
        return int(self.states.shape[0])

    def rows_of(self, texts: np.ndarray) -> np.ndarray:
        """The rows whose text is one of `texts` (indices, in row order)."""
        return np.nonzero(np.isin(self.text, texts))[0]


def levels(loaded: LoadedModel) -> int:
    """The number of the last hidden state: hidden_states has levels + 1 entries (0 = the embeddings)."""
    config = loaded.model.config
    return int(getattr(config, "num_hidden_layers", 0) or len(getattr(config, "layers", ())) or 0)


def check_layer(loaded: LoadedModel, layer: Any) -> int:
    """`layer` as a hidden-state number of this model (0 = the embeddings, its last layer at most)."""
    top = levels(loaded)
    number = as_int(layer, "The layer")
    if not 0 <= number <= top:
        raise InputError(f"Layer {number} is out of range: {loaded.info.request.source} has hidden states 0-{top} "
                         f"(0 = the embeddings, {top} = its last layer).")
    return number


def collect(loaded: LoadedModel, texts: Sequence[str], layer: int, control: TaskControl,
            max_tokens: int = MAX_TOKENS, verb: str = "Read") -> TokenStates:
    """hidden_states[layer] of every token of every text (cut to the model's length), with its origin."""
    from bertstudio.core import engine

    fast = bool(getattr(loaded.tokenizer, "is_fast", False))
    encoded = engine.encode_all(loaded, texts, control=control, offsets=fast, special_tokens=True)
    total = int(encoded.lengths.sum())
    if total > max_tokens:
        raise InputError(f"The texts have {total:,} tokens; at most {max_tokens:,} can be held in memory here.",
                         hint="Use fewer or shorter lines.")
    model = loaded.model

    def forward(batch: engine.Batch) -> Any:
        return model(**batch.inputs, output_hidden_states=True).hidden_states[layer]

    def per_row(batch: engine.Batch, found: Any) -> list[Any]:
        return [found[k, :int(n)] for k, n in enumerate(batch.lengths)]

    rows = engine.run(loaded, encoded, forward, control, verb=verb, unit="texts", rows_of=per_row)
    width = int(rows[0].shape[-1]) if rows else int(getattr(model.config, "hidden_size", 0) or 0)
    states = np.concatenate(rows).astype(np.float32, copy=False) if rows else np.zeros((0, width), np.float32)
    lengths = encoded.lengths
    text = np.repeat(np.arange(len(texts), dtype=np.int32), lengths)
    position = np.concatenate([np.arange(n, dtype=np.int32) for n in lengths]) if len(texts) else \
        np.zeros(0, np.int32)
    ids = [i for row in encoded.input_ids for i in row]
    tokens = tuple(str(t) for t in loaded.tokenizer.convert_ids_to_tokens(ids))
    special = np.asarray([s for row in encoded.extras["special_tokens_mask"] for s in row], dtype=bool)
    if fast:
        spans = np.asarray([pair for row in encoded.extras["offset_mapping"] for pair in row], np.int32).reshape(-1, 2)
    else:
        spans = np.zeros((len(ids), 2), np.int32)
    spans[special] = 0
    return TokenStates(states, text, position, tokens, spans, special, encoded.cut)


def split_texts(count: int, held_out: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Text indices for training and for the held-out share (whole texts: no text is on both sides)."""
    order = np.random.default_rng(seed).permutation(count)
    held = max(1, round(count * held_out)) if held_out > 0 and count > 1 else 0
    return np.sort(order[held:]), np.sort(order[:held])


def first_tokens(found: TokenStates) -> TokenStates:
    """Only each text's first token ([CLS], <s>): where a sequence classifier reads."""
    from dataclasses import replace

    rows = np.nonzero(found.position == 0)[0]
    return replace(found, states=found.states[rows], text=found.text[rows], position=found.position[rows],
                   tokens=tuple(found.tokens[i] for i in rows.tolist()), spans=found.spans[rows],
                   special=found.special[rows])
