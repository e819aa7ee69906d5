"""Nearest neighbours by cosine over unit-length rows: exact brute force where that stays interactive,
a faiss inverted-file index above it.

Why faiss (faiss-cpu, Meta's similarity-search library, BSD-licensed, wheels for every platform):
exact numpy over a corpus's float16 token vectors costs ~3 us a row (float16 -> float32 and one
matrix-vector product per chunk), so ~2M rows (the token index of 100,000 sentences) takes seconds
a query. faiss's IndexIVFScalarQuantizer with fp16 codes clusters the rows once (k-means, sqrt(N)
lists) and scans only the `nprobe` nearest lists: a few ms a query. fp16 codes are lossless for our
rows (they are stored as float16 already), so the only approximation is which lists are probed;
the returned candidates are re-scored exactly. Measured in bench/bench_corpus.py (recall@10 vs
brute force, and latency). Below EXACT_MAX_ROWS the scan is exact and faiss is never imported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from bertstudio.core.progress import TaskControl

CHUNK_ROWS = 65_536  # rows converted to float32 at once (25 MiB at 384 dims)
EXACT_MAX_ROWS = 100_000  # up to this many rows, exact brute force (~0.1-0.3 s a query at worst)
NPROBE = 128  # of ~sqrt(N) lists: 2M x 384 clustered rows, recall@10 0.89 at 11 ms (32: 0.76 at 3 ms)
TRAIN_PER_LIST = 40  # k-means sample: this many rows per list (faiss warns below 39)
ADD_ROWS = 100_000  # rows added to the inverted lists between cancellation checks
CANDIDATES = 64  # faiss returns at least this many rows, re-scored exactly, so ties and rounding agree


def normalised(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float32); an all-zero row stays zero (its cosine is 0)."""
    import numpy as np

    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=-1, keepdims=True)
    return array / np.where(norms > 0, norms, 1.0)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores, best first (ties: the lower index first)."""
    import numpy as np

    k = min(k, scores.shape[0])
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    part = np.argpartition(-scores, k - 1)[:k] if k < scores.shape[0] else np.arange(scores.shape[0])
    return part[np.lexsort((part, -scores[part]))]


def unit_query(query: np.ndarray) -> np.ndarray:
    import numpy as np

    return normalised(np.asarray(query, dtype=np.float32).reshape(1, -1))[0]


def cosine_scores(unit_rows: np.ndarray, query: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Cosine of every (already unit-length) row with `query`, in float32; rows where `mask` is False
    score -inf. Rows are read CHUNK_ROWS at a time, so a float16 index is never copied whole."""
    import numpy as np

    unit = unit_query(query)
    scores = np.empty(unit_rows.shape[0], dtype=np.float32)
    for start in range(0, unit_rows.shape[0], CHUNK_ROWS):
        block = np.asarray(unit_rows[start:start + CHUNK_ROWS], dtype=np.float32)
        scores[start:start + block.shape[0]] = block @ unit
    if mask is not None:
        scores[~mask] = -np.inf
    return scores


def nearest_unit(unit_rows: np.ndarray, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    """(row, cosine) of the k unit-length rows nearest `query`, best first: one scan, no normalising
    of the rows (the corpus index stores its sentence vectors at unit length)."""
    if unit_rows.ndim != 2 or unit_rows.shape[0] == 0:
        return []
    scores = cosine_scores(unit_rows, query)
    return [(int(i), float(scores[i])) for i in top_k(scores, k)]


def nearest_sentences(vectors: np.ndarray, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    """(row, cosine) of the k rows of `vectors` (n x d, need not be unit length) nearest `query` (d,)
    by cosine, best first. Exact. For Evaluate's nearest rows; unit rows should use nearest_unit."""
    import numpy as np

    array = np.asarray(vectors)
    if array.ndim != 2 or array.shape[0] == 0:
        return []
    return nearest_unit(normalised(array), query, k)


def import_faiss() -> Any:
    """faiss, imported on first use (it loads its own OpenMP runtime: ~0.2 s), using as many threads
    as torch does, so the two never oversubscribe the cores."""
    import faiss
    import torch

    faiss.omp_set_num_threads(max(1, torch.get_num_threads()))
    return faiss


class TokenSearch:
    """The k rows of a unit-length matrix (float16 or float32) nearest a query by cosine.

    Exact brute force up to `exact_max_rows` rows; above, a faiss IndexIVFScalarQuantizer (fp16
    codes, inner product) built here, with progress and cancellation between steps. Scores returned
    are always the exact cosines of the returned rows."""

    def __init__(self, unit_rows: np.ndarray, control: TaskControl | None = None,
                 exact_max_rows: int = EXACT_MAX_ROWS, nprobe: int = NPROBE, lists: int | None = None,
                 layout: IvfLayout | None = None) -> None:
        """`layout`: the clusters of an earlier build of these rows (from the cache): no k-means and no
        assignment, the rows are filed straight into their lists."""
        self.rows = unit_rows
        self.ivf: Any = None
        self.layout: IvfLayout | None = None
        if unit_rows.shape[0] > exact_max_rows:
            self.layout = layout if layout is not None else cluster(unit_rows, control, lists)
            self.ivf = file_rows(unit_rows, self.layout, control)
            self.ivf.nprobe = nprobe

    @property
    def exact(self) -> bool:
        return self.ivf is None

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(row indices, cosines), best first (ties: the lower row first)."""
        import numpy as np

        if self.ivf is None:
            scores = cosine_scores(self.rows, query)
            best = top_k(scores, k)
            return best, scores[best]
        unit = unit_query(query)
        _, found = self.ivf.search(unit[None, :], max(k, CANDIDATES))
        rows = np.sort(found[0][found[0] >= 0])  # row order: ties break on the lower row, as exact does
        exact = np.asarray(self.rows[rows], dtype=np.float32) @ unit
        best = top_k(exact, k)
        return rows[best], exact[best]


@dataclass(frozen=True)
class IvfLayout:
    """What a faiss inverted-file index of some rows costs to compute: its centroids (k-means) and
    the list of every row. Plain arrays, so the corpus cache stores them without faiss's own format."""

    centroids: np.ndarray  # (lists, dim) float32
    assignment: np.ndarray  # (rows,) int64: the list of each row


def cluster(unit_rows: np.ndarray, control: TaskControl | None, lists: int | None = None) -> IvfLayout:
    """k-means (faiss, seeded) on TRAIN_PER_LIST rows a list, then every row's nearest centroid,
    ADD_ROWS at a time with control.check() between."""
    import numpy as np

    faiss = import_faiss()
    n, dim = unit_rows.shape
    nlist = lists or max(16, min(65_536, int(math.sqrt(n))))
    if control is not None:
        control.report(f"Clustering {n:,} token vectors into {nlist:,} lists (faiss)", 0.0)
        control.check()
    sample_rows = min(n, nlist * TRAIN_PER_LIST)
    sample = np.sort(np.random.default_rng(0).choice(n, sample_rows, replace=False))
    kmeans = faiss.Kmeans(dim, nlist, niter=10, seed=0, spherical=True, verbose=False)  # unit centroids: IP is cosine
    kmeans.train(np.ascontiguousarray(unit_rows[sample], dtype=np.float32))
    centroids = np.ascontiguousarray(kmeans.centroids, dtype=np.float32)
    quantizer = faiss.IndexFlatIP(dim)
    quantizer.add(centroids)
    assignment = np.empty(n, dtype=np.int64)
    for start in range(0, n, ADD_ROWS):
        if control is not None:
            control.check()
            control.report(f"Assigning token vectors to lists: {start:,} of {n:,}", start / n)
        _, nearest = quantizer.search(np.ascontiguousarray(unit_rows[start:start + ADD_ROWS], dtype=np.float32), 1)
        assignment[start:start + nearest.shape[0]] = nearest[:, 0]
    return IvfLayout(centroids, assignment)


def file_rows(unit_rows: np.ndarray, layout: IvfLayout, control: TaskControl | None) -> Any:
    """An IndexIVFScalarQuantizer (fp16 codes, inner product) with `layout`'s lists, the rows filed into
    them ADD_ROWS at a time (control.check() between)."""
    import numpy as np
    from faiss.contrib.ivf_tools import add_preassigned

    faiss = import_faiss()
    n, dim = unit_rows.shape
    quantizer = faiss.IndexFlatIP(dim)
    quantizer.add(layout.centroids)
    index = faiss.IndexIVFScalarQuantizer(quantizer, dim, layout.centroids.shape[0], faiss.ScalarQuantizer.QT_fp16,
                                          faiss.METRIC_INNER_PRODUCT)
    index.train(layout.centroids)  # the quantizer is trained already: this only readies the fp16 codec
    for start in range(0, n, ADD_ROWS):
        if control is not None:
            control.check()
            control.report(f"Filing token vectors: {start:,} of {n:,}", start / n)
        part = np.ascontiguousarray(unit_rows[start:start + ADD_ROWS], dtype=np.float32)
        add_preassigned(index, part, np.ascontiguousarray(layout.assignment[start:start + part.shape[0]]))
    return index
