"""Tokenizing for the batch engine (core/engine.py): every row once, unpadded, cut rows recorded.

- `encode_all(loaded, texts, pairs)` -> `Encoded`, in chunks with a cancel check and progress between
  them. Fast tokenizers are not thread-safe: the caller holds the model lock (`engine.encode_all` does).
  Neither the CLI nor the window sets TOKENIZERS_PARALLELISM: the tokenizer's own threads are 1.7x one
  thread on 2 cores.
- `Stream(loaded, texts, pairs)`: the same rows a chunk at a time, the next chunk tokenized on a worker
  thread while the engine runs the current one (`engine.encode_run`), so the host's tokenizing hides
  behind the device's forward. Rows go longest first by characters, so each chunk holds rows of near one
  length and padding stays as low as one sort of every row gives.
- `rows(ids)`: token id rows a caller built (perturbed copies of one input) as an `Encoded`.

numpy is imported inside the functions: nothing here runs before the window shows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from bertstudio.core.progress import TaskControl

if TYPE_CHECKING:
    import numpy as np

    from bertstudio.core.models import LoadedModel

CHUNK = 1024  # rows per tokenizer call: one call over 100,000 rows kept Cancel and Ctrl+C waiting for seconds
# Rows per streamed chunk: the first chunk's tokenizing is the only one not hidden behind a forward, and a
# chunk still fills several GPU batches of short rows (a chunk's last batch may run part-full).
STREAM_CHUNK = 512


@dataclass(frozen=True)
class Encoded:
    """Every row tokenized once, unpadded: what `engine.batches` sorts and `engine.run` pads."""

    input_ids: list[list[int]]
    token_type_ids: list[list[int]] | None  # None where the model takes none (DistilBERT, RoBERTa)
    cut: tuple[int, ...]  # rows longer than the model reads: cut to its length
    max_length: int
    # Per row, where asked: "special_tokens_mask" (list[int]), "offset_mapping" (list[tuple[int, int]]).
    extras: dict[str, list[Any]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.input_ids)

    @property
    def lengths(self) -> np.ndarray:
        import numpy as np

        return np.fromiter((len(row) for row in self.input_ids), dtype=np.int64, count=len(self.input_ids))


class EncodeOptions(TypedDict, total=False):
    """`encode_all`'s and `Stream`'s keyword options."""

    max_length: int | None  # the model's own by default
    offsets: bool  # keep each row's "offset_mapping"
    special_tokens: bool  # keep each row's "special_tokens_mask"


@dataclass(frozen=True)
class _Settings:
    """One tokenizer call's options, and the per-row extras it returns."""

    limit: int
    types: bool  # the model takes token type ids
    keys: tuple[str, ...]  # extras kept per row
    options: dict[str, Any]


def _settings(loaded: LoadedModel, max_length: int | None, offsets: bool, special_tokens: bool) -> _Settings:
    limit = int(max_length or loaded.info.max_length)
    types = "token_type_ids" in loaded.tokenizer.model_input_names
    options = {"truncation": True, "max_length": limit, "return_attention_mask": False,
               "return_token_type_ids": types, "return_special_tokens_mask": special_tokens,
               "return_offsets_mapping": offsets}
    keys = tuple(k for k, wanted in (("special_tokens_mask", special_tokens), ("offset_mapping", offsets)) if wanted)
    return _Settings(limit, types, keys, options)


def encode_all(loaded: LoadedModel, texts: Sequence[str], pairs: Sequence[str | None] | None = None,
               control: TaskControl | None = None, *, max_length: int | None = None, offsets: bool = False,
               special_tokens: bool = False) -> Encoded:
    """Tokenize every row once (with its pair where given), truncated to `max_length` (the model's
    own by default), in chunks with a cancel check and progress between them. A pair may be None
    for some rows only ("" is an empty second sequence, as the tokenizer reads it). Rows that did not
    fit are recorded in `cut`."""
    control = control or TaskControl()
    settings = _settings(loaded, max_length, offsets, special_tokens)
    parts: list[tuple[Encoded, Sequence[int] | np.ndarray]] = []
    for start in range(0, len(texts), CHUNK):
        control.check()
        if len(texts) > CHUNK:
            control.report(f"Tokenized {start:,} of {len(texts):,} rows", start / len(texts))
        part = range(start, min(start + CHUNK, len(texts)))
        parts.append((_encode_rows(loaded, texts, pairs, part, settings), part))
    return _joined(parts, len(texts), settings)


def _encode_rows(loaded: LoadedModel, texts: Sequence[str], pairs: Sequence[str | None] | None,
                 part: Sequence[int], settings: _Settings) -> Encoded:
    """The rows `part` (positions in `texts`) tokenized, in that order; `cut` holds positions in `part`.
    The caller owns the tokenizer (holds the model lock, or runs for a thread that holds it)."""
    ids: list[list[int]] = [[] for _ in part]
    type_ids: list[list[int]] = [[] for _ in part]
    extras: dict[str, list[Any]] = {k: [None] * len(part) for k in settings.keys}
    for group, seconds in _by_pairing(part, pairs):
        found = loaded.tokenizer([texts[part[k]] for k in group], seconds, **settings.options)
        for n, k in enumerate(group):
            ids[k] = found["input_ids"][n]
            if settings.types:
                type_ids[k] = found["token_type_ids"][n]
            for key in settings.keys:
                extras[key][k] = found[key][n]
    cut = _cut_rows(loaded, texts, pairs, part, ids, settings.limit)
    return Encoded(ids, type_ids if settings.types else None, cut, settings.limit, extras)


def _by_pairing(part: Sequence[int],
                pairs: Sequence[str | None] | None) -> Iterator[tuple[list[int], list[str] | None]]:
    """Positions in `part`, in two tokenizer calls at most: the rows without a pair and those with one."""
    if pairs is None:
        yield list(range(len(part))), None
        return
    single = [k for k, i in enumerate(part) if pairs[i] is None]
    paired = [k for k, i in enumerate(part) if pairs[i] is not None]
    if single:
        yield single, None
    if paired:
        yield paired, [str(pairs[part[k]]) for k in paired]


def _cut_rows(loaded: LoadedModel, texts: Sequence[str], pairs: Sequence[str | None] | None,
              part: Sequence[int], ids: list[list[int]], limit: int) -> tuple[int, ...]:
    """Positions in `part` that were cut: only a row at the limit exactly may have been, so only those
    are tokenized again."""
    at_limit = [part[k] for k, row in enumerate(ids) if len(row) >= limit]
    if not at_limit:
        return ()
    cut = []
    for group, seconds in _by_pairing(at_limit, pairs):
        full = loaded.tokenizer([texts[at_limit[k]] for k in group], seconds, truncation=False,
                                return_attention_mask=False, return_token_type_ids=False)["input_ids"]
        cut += [at_limit[k] for k, row in zip(group, full, strict=True) if len(row) > limit]
    where = {i: k for k, i in enumerate(part)}
    return tuple(sorted(where[i] for i in cut))


def _joined(parts: Sequence[tuple[Encoded, Sequence[int] | np.ndarray]], count: int, settings: _Settings) -> Encoded:
    """One `Encoded` of `count` rows in input order from chunks and the positions of their rows."""
    ids: list[list[int]] = [[] for _ in range(count)]
    type_ids: list[list[int]] = [[] for _ in range(count)]
    extras: dict[str, list[Any]] = {k: [None] * count for k in settings.keys}
    cut: list[int] = []
    for encoded, where in parts:
        for k, i in enumerate(where):
            ids[i] = encoded.input_ids[k]
            if encoded.token_type_ids is not None:
                type_ids[i] = encoded.token_type_ids[k]
            for key in settings.keys:
                extras[key][i] = encoded.extras[key][k]
        cut += [int(where[k]) for k in encoded.cut]
    return Encoded(ids, type_ids if settings.types else None, tuple(sorted(cut)), settings.limit, extras)


class Stream:
    """The rows tokenized a chunk ahead on a worker thread, longest first by characters. `chunks()` is
    read by the engine's run, which holds the model lock throughout: the worker tokenizes on its behalf
    (no one else can take the tokenizer meanwhile) and is joined before the run lets the lock go."""

    def __init__(self, loaded: LoadedModel, texts: Sequence[str], pairs: Sequence[str | None] | None = None,
                 control: TaskControl | None = None, *, chunk: int | None = None, max_length: int | None = None,
                 offsets: bool = False, special_tokens: bool = False) -> None:
        import numpy as np

        self._loaded, self._texts, self._pairs = loaded, texts, pairs
        self._control = control or TaskControl()
        self._settings = _settings(loaded, max_length, offsets, special_tokens)
        seconds = pairs if pairs is not None else [None] * len(texts)
        sizes = np.fromiter((len(text) + len(second or "") for text, second in zip(texts, seconds, strict=True)),
                            dtype=np.int64, count=len(texts))
        order = np.argsort(-sizes, kind="stable")
        size = max(chunk or STREAM_CHUNK, 1)
        self._parts = [order[start:start + size] for start in range(0, len(texts), size)]
        self._done: list[tuple[Encoded, np.ndarray]] = []

    def __len__(self) -> int:
        return len(self._texts)

    def chunks(self) -> Iterator[tuple[Encoded, np.ndarray]]:
        """Each chunk's rows tokenized, with their positions in the input; the next one is being
        tokenized while the caller runs this one. Once Cancel is pressed the worker skips its chunk,
        and the caller's thread raises when it reaches it."""
        from concurrent.futures import ThreadPoolExecutor

        if len(self._parts) <= 1:  # nothing to overlap: no thread for it
            for n in range(len(self._parts)):
                yield self._taken(n, self._encode(n))
            return
        with ThreadPoolExecutor(1, thread_name_prefix="tokenize") as worker:
            ahead = worker.submit(self._encode, 0)
            for n in range(len(self._parts)):
                chunk = self._taken(n, ahead.result())
                if n + 1 < len(self._parts):
                    ahead = worker.submit(self._encode, n + 1)
                yield chunk

    def _taken(self, n: int, encoded: Encoded | None) -> tuple[Encoded, np.ndarray]:
        """Chunk n, kept for `encoded()`; where Cancel made the worker skip it, raised here (the caller's thread)."""
        if encoded is None:
            self._control.check()
            raise RuntimeError("a chunk was skipped without a stop request")
        self._done.append((encoded, self._parts[n]))
        return encoded, self._parts[n]

    def _encode(self, n: int) -> Encoded | None:
        """Chunk n tokenized; None once Cancel is pressed (the caller's thread raises, and the run's own
        checks stay the only ones: a worker's check would race the caller's)."""
        if self._control.stop_requested:
            return None
        part = self._parts[n].tolist()
        return _encode_rows(self._loaded, self._texts, self._pairs, part, self._settings)

    def encoded(self) -> Encoded:
        """Every row in input order, once `chunks()` has been read to its end."""
        if len(self._done) != len(self._parts):
            raise RuntimeError("Stream.encoded() before every chunk was read")
        return _joined(self._done, len(self._texts), self._settings)


def rows(ids: Sequence[Sequence[int]]) -> Encoded:
    """Token id rows the caller built (perturbed or shortened copies of one input, flattened) for
    `engine.run`; a forward may read its own inputs by `batch.rows`."""
    found = [list(row) for row in ids]
    return Encoded(found, None, (), max((len(row) for row in found), default=0))


def cut_note(loaded: LoadedModel, encoded: Encoded, lines: Sequence[int] | None = None) -> list[str]:
    """'3 row(s) were longer than the 512 tokens the model reads and were cut (lines 4, 9, 12).'"""
    if not encoded.cut:
        return []
    where = ""
    if lines is not None:
        named = ", ".join(str(lines[i]) for i in encoded.cut[:10]) + ("…" if len(encoded.cut) > 10 else "")
        where = f" (lines {named})"
    return [f"{len(encoded.cut)} row(s) were longer than the {encoded.max_length} tokens the model reads and "
            f"were cut{where}."]
