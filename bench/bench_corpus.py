"""Corpus search (issue 21): indexing a corpus vs the plain batched forward over the same lines, and
one query over 100,000 indexed sentences (exact), and over a ~2M-token index: exact brute force vs
the faiss inverted-file index (core/corpus/search.py), with recall@10 against brute force.

Indexing `ours` = core.corpus build_index (tokenize, length-sorted batches of 32 with
output_hidden_states, float16 token vectors, mean-pooled sentences) + writing the cache file;
`raw` = tokenize and forward the same lines in file order, 32 at a time, padded, nothing kept.
The query timings use synthetic unit vectors of the real shapes (100,000 x 384 float32 sentences;
2,000,000 x 384 float16 tokens around 20,000 centres, as token states cluster by word type; the
queries are indexed rows moved a little, as the same word in a new sentence is).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from bench_attention import _checkpoint
from common import Row, interleaved, median_time

if TYPE_CHECKING:
    import numpy as np

MINILM = Path.home() / ".cache/bertstudio-test-models/all-minilm-l6-v2"
DEMO = Path(__file__).resolve().parent.parent / "resources/corpus/ambiguous_words.txt"


def _lines(words: list[str] | None, count: int) -> list[tuple[int, str]]:
    if words is None:
        base = [t for t in DEMO.read_text(encoding="utf-8").splitlines() if t.strip()]
    else:
        base = [" ".join(words[(i * 7 + j) % len(words)] for j in range(6 + i % 20)) for i in range(64)]
    return [(i + 1, base[i % len(base)]) for i in range(count)]


def _indexing_row(name: str, folder: Path, lines: list[tuple[int, str]]) -> Row:
    import torch

    from bertstudio.core.corpus import cache
    from bertstudio.core.corpus.index import build_index
    from bertstudio.core.corpus.query import encoder_task, model_max_length
    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.progress import TaskControl

    loaded = load_model(LoadRequest(str(folder), encoder_task()))
    texts = [t for _, t in lines]
    length = model_max_length(loaded)
    out = Path(tempfile.mkdtemp()) / "index.npz"

    def ours() -> None:
        cache.save(build_index(loaded, lines, loaded.model.config.num_hidden_layers, length, TaskControl()), out, "k")

    def raw() -> None:
        with torch.inference_mode():
            for start in range(0, len(texts), 32):
                enc = loaded.tokenizer(texts[start:start + 32], padding=True, truncation=True, max_length=length,
                                       return_tensors="pt")
                loaded.model(**enc)

    a, b = interleaved(ours, raw, repeats=3)
    return Row(name, a, b, f"{len(lines)} lines; raw = plain batched forward (file order, 32/batch)")


def _clustered(rows: int, dim: int, centres: int, seed: int = 0) -> np.ndarray:
    """Unit float16 vectors around `centres` centres, as token states cluster by word type."""
    import numpy as np

    rng = np.random.default_rng(seed)
    middle = rng.standard_normal((centres, dim), dtype=np.float32)
    out = np.empty((rows, dim), np.float16)
    for start in range(0, rows, 200_000):
        end = min(rows, start + 200_000)
        block = middle[rng.integers(0, centres, end - start)]
        block += 0.7 * rng.standard_normal(block.shape, dtype=np.float32)
        out[start:end] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def _token_rows(tokens: np.ndarray) -> list[Row]:
    """Exact brute force vs the faiss index over the same rows: latency and recall@10."""
    import time

    import numpy as np

    from bertstudio.core.corpus.search import NPROBE, TokenSearch

    rng = np.random.default_rng(1)
    picks = rng.integers(0, tokens.shape[0], 20)
    queries = tokens[picks].astype(np.float32) + 0.05 * rng.standard_normal((20, tokens.shape[1]), dtype=np.float32)
    exact = TokenSearch(tokens, exact_max_rows=tokens.shape[0])
    truth = [set(exact.search(q, 10)[0].tolist()) for q in queries[:10]]
    exact_ms = median_time(lambda: exact.search(queries[0], 10), 3, 1)
    start = time.perf_counter()
    approx = TokenSearch(tokens, exact_max_rows=0)
    built = time.perf_counter() - start
    found = []
    for nprobe in (32, NPROBE, 256):
        approx.ivf.nprobe = nprobe
        hits = [len(want & set(approx.search(q, 10)[0].tolist())) for want, q in zip(truth, queries, strict=False)]
        recall = sum(hits) / (10 * len(hits))
        took = median_time(lambda: [approx.search(q, 10) for q in queries], 3, 1) / len(queries)
        found.append(Row(f"query {tokens.shape[0] / 1e6:.0f}M tokens, faiss IVF nprobe {nprobe} (< 100 ms)", took,
                         exact_ms, f"recall@10 vs brute force {recall:.2f}; raw = exact numpy scan; {approx.ivf.nlist} "
                         f"lists, built in {built:.0f} s"))
    return found


def rows() -> list[Row]:
    import numpy as np

    from bertstudio.core.corpus.search import nearest_unit, normalised

    found = []
    if MINILM.is_dir():
        found.append(_indexing_row("corpus index MiniLM-L6 (ratio <= 1.11)", MINILM, _lines(None, 1024)))
    words = "the cat sat on mat dog ran fast big small house tree water book".split()
    big = _checkpoint(Path(tempfile.mkdtemp()))
    found.append(_indexing_row("corpus index BERT-base-size (ratio <= 1.11)", big, _lines(words, 256)))
    rng = np.random.default_rng(0)
    sentences = normalised(rng.standard_normal((100_000, 384), dtype=np.float32))  # the index stores unit rows
    query = rng.standard_normal(384, dtype=np.float32)
    took = median_time(lambda: nearest_unit(sentences, query, 10), 10, 2)
    found.append(Row("query 100k sentences x 384 (< 100 ms)", took, note="synthetic unit vectors, exact scan"))
    found += _token_rows(_clustered(2_000_000, 384, 20_000))
    return found
