"""Index a corpus file (from the cache when it is there) and answer token and sentence queries."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bertstudio.core.corpus.index import CorpusIndex, build_index, check_layer, read_corpus
from bertstudio.core.errors import InputError
from bertstudio.core.limits import check_count
from bertstudio.core.notes import Note, info, warning

if TYPE_CHECKING:
    from bertstudio.core.models import LoadedModel
    from bertstudio.core.progress import TaskControl

MAX_K = 1000


@dataclass(frozen=True)
class Neighbour:
    line: int  # 1-based line number in the corpus file
    score: float  # cosine
    context: str  # the line's text
    token_index: int | None = None  # None for a sentence match
    token: str = ""
    span: tuple[int, int] = (0, 0)  # characters of the token in `context`

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"line": self.line}
        if self.token_index is not None:
            found |= {"token_index": self.token_index, "token": self.token}
        return found | {"score": round(self.score, 6), "context": self.context}


def check_k(k: Any) -> int:
    return check_count(k, "k (neighbours)", 1, MAX_K)


def model_max_length(loaded: LoadedModel) -> int:
    return max(2, min(int(loaded.info.max_length or 512), 512))


def index_corpus(loaded: LoadedModel, path: str | Path, layer: Any, control: TaskControl,
                 folder: Path | None = None) -> tuple[CorpusIndex, tuple[Note, ...]]:
    """The index of `path` at `layer`, read from the cache when a valid one exists, else built and
    cached. The file is read once: the cache key is the digest of the very lines that are indexed.
    A cache file that fails validation (cache.load names why) is rebuilt, and said so in a note."""
    from bertstudio.core.corpus import cache

    layer = check_layer(layer, int(loaded.model.config.num_hidden_layers))
    lines = read_corpus(path, control)
    max_length = model_max_length(loaded)
    digest = cache.corpus_digest(lines)
    key = cache.cache_key(loaded, digest, layer, max_length)
    target = (folder or cache.cache_dir()) / f"{key}.npz"
    notes: list[Note] = []
    if os.path.lexists(target):  # a FIFO, a device link or a folder there is refused by the reader
        try:
            found = cache.load(target, key, lines)
        except cache.BadCache as error:
            notes.append(warning(f"The cached index was unusable ({error}); it was rebuilt.", str(target)))
        else:
            return searchable(found, control, [info(f"Read from the cache ({target.name}).", str(target))],
                              cached_at=(target, key))
    control.report(f"Indexing {len(lines):,} lines at layer {layer}", 0.0)
    built = build_index(loaded, lines, layer, max_length, control)
    try:
        cache.save(built, target, key, digest)
    except OSError as error:
        notes.append(warning(f"The index could not be cached in '{target.parent}': {error.strerror or error}.",
                             str(target)))
        return searchable(built, control, notes)
    return searchable(built, control, notes, cached_at=(target, key))


def searchable(index: CorpusIndex, control: TaskControl, notes: list[Note], exact_max_rows: int | None = None,
               cached_at: tuple[Path, str] | None = None) -> tuple[CorpusIndex, tuple[Note, ...]]:
    """`index` with its token search ready: exact up to search.EXACT_MAX_ROWS token vectors, a faiss
    inverted-file index above (built here, in the worker, with progress and Cancel). `cached_at`: the
    cache file and key of `index`; the faiss lists are read from beside it (a bad lists file is
    computed again, said in a note), or stored there once built."""
    from bertstudio.core.corpus import cache
    from bertstudio.core.corpus.search import EXACT_MAX_ROWS, TokenSearch

    limit = EXACT_MAX_ROWS if exact_max_rows is None else exact_max_rows
    stored = None
    if cached_at is not None and index.token_count > limit:
        lists_file = cache.layout_path(cached_at[0])
        try:
            stored = cache.load_layout(lists_file, cached_at[1], *index.vectors.shape)
        except cache.BadCache as error:
            notes.append(warning(f"The cached search lists were unusable ({error}); they were computed again.",
                                 str(lists_file)))
    search = TokenSearch(index.vectors, control, limit, layout=stored)
    if search.layout is not None and stored is None and cached_at is not None:
        try:
            cache.save_layout(search.layout, cache.layout_path(cached_at[0]), cached_at[1])
        except OSError as error:
            notes.append(warning(f"The search lists could not be cached in '{cached_at[0].parent}': "
                                 f"{error.strerror or error}.", str(cached_at[0])))
    if not search.exact:
        notes.append(info(f"Token search is approximate above {EXACT_MAX_ROWS:,} vectors: faiss scans the "
                          f"{search.ivf.nprobe} nearest of {search.ivf.nlist:,} clusters (recall@10 about 0.9 "
                          "in the bench); scores shown are exact cosines."))
    return replace(index, search=search), tuple(notes)


def query_states(loaded: LoadedModel, text: str, layer: int) -> tuple[list[str], Any, Any]:
    """(tokens as `attention` prints them, [CLS] included; their layer-L states; special mask)."""
    if not text.strip():
        raise InputError("Type a text to search with.")
    from bertstudio.core import engine

    with engine.exclusive(loaded) as model:  # one text, one forward
        encoded = loaded.tokenizer([text], truncation=True, max_length=model_max_length(loaded), return_tensors="pt",
                                   return_special_tokens_mask=True)
        special = encoded.pop("special_tokens_mask")[0].bool().numpy()
        states = engine.forward(model, encoded, output_hidden_states=True).hidden_states[layer][0].float().cpu().numpy()
    tokens = loaded.tokenizer.convert_ids_to_tokens(encoded["input_ids"][0].tolist())
    return [str(t) for t in tokens], states, special


def token_neighbours(index: CorpusIndex, query: Any, k: int) -> list[Neighbour]:
    """The k corpus tokens whose state has the highest cosine with `query` (H,)."""
    from bertstudio.core.corpus.search import TokenSearch

    search = index.search if index.search is not None else TokenSearch(index.vectors)
    rows, scores = search.search(query, k)
    found = []
    for i, score in zip(rows.tolist(), scores.tolist(), strict=True):
        line = int(index.token_line[i])
        start, end = (int(v) for v in index.spans[i])
        found.append(Neighbour(int(index.line_numbers[line]), float(score), index.lines[line],
                               int(index.token_index[i]), index.tokens[i], (start, end)))
    return found


def sentence_neighbours(index: CorpusIndex, query: Any, k: int) -> list[Neighbour]:
    """The k corpus lines whose mean-pooled state has the highest cosine with `query` (H,): one exact
    scan of the unit sentence vectors (100,000 x 384 floats: a few ms)."""
    from bertstudio.core.corpus.search import nearest_unit

    return [Neighbour(int(index.line_numbers[row]), score, index.lines[row])
            for row, score in nearest_unit(index.sentences, query, k)]


def text_query(loaded: LoadedModel, text: str, layer: int, token: int | None) -> tuple[Any, list[str]]:
    """The query vector of `text`: token `token`'s state (a special or out-of-range index refused),
    or the mean-pooled state of the whole text when `token` is None."""
    tokens, states, special = query_states(loaded, text, layer)
    if token is None:
        return states.mean(axis=0), tokens
    if not 0 <= token < len(tokens):
        raise InputError(f"Token {token} is out of range: the text has {len(tokens)} tokens (0-{len(tokens) - 1}).")
    if special[token]:
        raise InputError(f"Token {token} is the special token {tokens[token]}; choose a word piece.",
                         hint=f"Tokens: {' '.join(f'{i}:{t}' for i, t in enumerate(tokens))}"[:400])
    return states[token], tokens


def encoder_task() -> str:
    """The task key whose spec loads the bare encoder (AutoModel): the corpus reads hidden states only."""
    from bertstudio.core.tasks.spec import all_specs

    bare = [s for s in all_specs().values() if s.model_class == "AutoModel" and s.run is not None]
    bare.sort(key=lambda s: (not s.ignore_missing, s.order))
    return bare[0].key


@dataclass(frozen=True)
class CorpusAnswer:
    """What a corpus query found: its neighbours, what it searched with, and a summary line."""

    neighbours: tuple[Neighbour, ...]
    query: str  # "tokens like 'bank' (token 2)" or "sentences like the text"
    summary: str


def summary(neighbours: list[Neighbour] | tuple[Neighbour, ...], sentences: bool = False, top: int = 8) -> str:
    """Which words the neighbours are, most frequent first ("bank ×6, banks ×2, river"), or for
    sentences the range of their scores."""
    from collections import Counter

    if not neighbours:
        return "No neighbours."
    if sentences:
        return f"{len(neighbours)} sentences, cosine {neighbours[-1].score:.3f} to {neighbours[0].score:.3f}"
    counts = Counter(n.token for n in neighbours)
    words = [f"{word} ×{count}" if count > 1 else word for word, count in counts.most_common(top)]
    more = len(counts) - top
    return f"{len(neighbours)} tokens: " + ", ".join(words) + (f" and {more} more" if more > 0 else "")


def excerpt(neighbour: Neighbour, width: int = 80) -> tuple[str, str, str]:
    """(before, match, after) of the neighbour's line: at most `width` characters either side of the
    matched token, cut with an ellipsis; the whole line as `before` when there is no span."""
    text, (start, end) = neighbour.context, neighbour.span
    if neighbour.token_index is None or end <= start or end > len(text):
        return (text if len(text) <= 2 * width else text[:2 * width] + "…"), "", ""
    before, after = text[max(0, start - width):start], text[end:end + width]
    return ("…" if start > width else "") + before, text[start:end], after + ("…" if end + width < len(text) else "")


def corpus_index_job(request: Any, path: str, layer: int, control: TaskControl,
                     folder: Path | None = None) -> tuple[CorpusIndex, tuple[Note, ...]]:
    """The UI's worker side of Index: the tab's model (from the model cache), then index_corpus."""
    from bertstudio.core.models import load_model

    loaded = load_model(request, control)
    control.check()
    return index_corpus(loaded, path, layer, control, folder)


def corpus_query_job(request: Any, index: CorpusIndex, text: str, token: int | None, k: int,
                     control: TaskControl) -> CorpusAnswer:
    """The UI's worker side of a search: `text`'s token `token` (or the whole text when None) at the
    index's layer, against the index."""
    from bertstudio.core.models import load_model

    loaded = load_model(request, control)
    control.check()
    query, tokens = text_query(loaded, text, index.layer, token)
    if token is None:
        found = sentence_neighbours(index, query, k)
        return CorpusAnswer(tuple(found), "sentences like the text", summary(found, sentences=True))
    found = token_neighbours(index, query, k)
    return CorpusAnswer(tuple(found), f"tokens like {tokens[token]!r} (token {token})", summary(found))
