"""Build a corpus index: every non-special token's layer-L hidden state (float16, unit length) with
(line, token index, token, character span), and every line's mean-pooled vector (mean over the
attention mask, as sentence-transformers pools), from the batch engine's forward passes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bertstudio.core.errors import InputError
from bertstudio.core.limits import check_count

if TYPE_CHECKING:
    import numpy as np

    from bertstudio.core.models import LoadedModel
    from bertstudio.core.progress import TaskControl

# A corpus is held in memory: 100,000 lines of ~20 tokens at 768 dims is ~3 GB of float16.
MAX_CORPUS_LINES = 100_000
MAX_CORPUS_TOKENS = 3_000_000
MAX_LINE_CHARS = 100_000  # one line: longer ones are refused (they would be truncated to the model's length)


@dataclass(frozen=True)
class CorpusIndex:
    """The searchable arrays of one corpus at one layer (see cache.py for how it is stored)."""

    layer: int
    lines: tuple[str, ...]  # the indexed lines (non-blank, stripped)
    line_numbers: np.ndarray  # (S,) int32: 1-based line number in the file
    sentences: np.ndarray  # (S, H) float32, unit length: mean-pooled layer-L states
    vectors: np.ndarray  # (N, H) float16, unit length: one per non-special token
    token_line: np.ndarray  # (N,) int32: index into `lines`
    token_index: np.ndarray  # (N,) int32: position in the tokenized line, [CLS] included
    spans: np.ndarray  # (N, 2) int32: character start, end of the token in its line (0, 0 if unknown)
    tokens: tuple[str, ...]  # (N,) the token texts
    # how `vectors` are searched (search.TokenSearch: exact, or a faiss index above a size); built in
    # the worker by query.index_corpus, not stored in the cache
    search: Any = field(default=None, compare=False, repr=False)

    @property
    def token_count(self) -> int:
        return int(self.vectors.shape[0])


def check_layer(layer: Any, layers: int) -> int:
    """0 is the embeddings, `layers` the last encoder layer (output_hidden_states numbering)."""
    return check_count(layer, "Layer", 0, layers)


def read_corpus(path: str | Path, control: TaskControl | None = None) -> list[tuple[int, str]]:
    """(line number, text) of the non-blank lines, at most MAX_CORPUS_LINES, each at most MAX_LINE_CHARS."""
    from bertstudio.core.datafiles import read_lines

    found = read_lines(path, "corpus file", max_rows=MAX_CORPUS_LINES, control=control)
    if not found:
        raise InputError(f"The corpus file '{Path(path).name}' has no text lines.",
                         hint="Put one sentence or passage on each line.")
    for number, text in found:
        if len(text) > MAX_LINE_CHARS:
            raise InputError(f"Line {number} of '{Path(path).name}' is {len(text):,} characters long; "
                             f"at most {MAX_LINE_CHARS:,} per line.", hint="Split long passages into lines.")
    return found


def build_index(loaded: LoadedModel, lines: list[tuple[int, str]], layer: int, max_length: int,
                control: TaskControl, batch_size: int | None = None) -> CorpusIndex:
    """Forward every line through the batch engine (tokenized once, sorted by length, a token budget, at
    most `batch_size` lines per forward, by default as many as the budget holds; Cancel per batch); each
    line's token vectors are made on the host while the batch is in hand, and come back in file order
    (line, then token)."""
    import numpy as np

    from bertstudio.core import engine
    from bertstudio.core.corpus.search import normalised

    texts = [text for _, text in lines]
    fast = bool(getattr(loaded.tokenizer, "is_fast", False))
    encoded = engine.encode_all(loaded, texts, control=control, max_length=max_length, offsets=fast,
                                special_tokens=True)
    total_tokens = int(encoded.lengths.sum())
    if total_tokens > MAX_CORPUS_TOKENS:
        raise InputError(f"The corpus has {total_tokens:,} tokens; at most {MAX_CORPUS_TOKENS:,} can be indexed.",
                         hint="Index a smaller file.")
    model, tokenizer = loaded.model, loaded.tokenizer
    hidden = int(model.config.hidden_size)

    def forward(batch: engine.Batch) -> Any:
        states = model(**batch.inputs, output_hidden_states=True).hidden_states[layer].float()
        mask = batch.inputs["attention_mask"].unsqueeze(-1).float()
        return states, (states * mask).sum(1) / mask.sum(1).clamp(min=1.0)

    def per_line(batch: engine.Batch, found: Any) -> list[Any]:
        states, pooled = found
        out = []
        for k, line in enumerate(batch.rows.tolist()):
            where = np.nonzero(~np.asarray(encoded.extras["special_tokens_mask"][line], dtype=bool))[0]
            names = tokenizer.convert_ids_to_tokens([encoded.input_ids[line][j] for j in where.tolist()])
            span = (np.asarray(encoded.extras["offset_mapping"][line], np.int32).reshape(-1, 2)[where] if fast
                    else np.zeros((len(where), 2), np.int32))
            out.append((pooled[k], normalised(states[k, where]).astype(np.float16), where.astype(np.int32), span,
                        [str(name) for name in names]))
        return out

    rows = engine.run(loaded, encoded, forward, control, max_rows=batch_size, verb="Indexed", unit="lines",
                      rows_of=per_line)
    sentences = np.stack([r[0] for r in rows]) if rows else np.zeros((0, hidden), np.float32)
    vectors = np.concatenate([r[1] for r in rows]) if rows else np.zeros((0, hidden), np.float16)
    line_of = np.concatenate([np.full(len(r[2]), n, np.int32) for n, r in enumerate(rows)]) if rows \
        else np.zeros(0, np.int32)
    index_of = np.concatenate([r[2] for r in rows]) if rows else np.zeros(0, np.int32)
    spans = np.concatenate([r[3] for r in rows]) if rows else np.zeros((0, 2), np.int32)
    return CorpusIndex(layer=layer, lines=tuple(texts), line_numbers=np.array([n for n, _ in lines], np.int32),
                       sentences=normalised(sentences), vectors=vectors, token_line=line_of,
                       token_index=index_of, spans=spans.astype(np.int32),
                       tokens=tuple(name for r in rows for name in r[4]))
