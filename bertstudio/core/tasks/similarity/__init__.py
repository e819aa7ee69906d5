"""Sentence similarity: sentence A against one or more sentences B, the cosine of their embeddings.

An embedding is the encoder's last hidden state pooled over the sentence: "mean" averages it over
the attention mask (sentence-transformers' definition for all-MiniLM-L6-v2 and most of its
models), "cls" takes the first token. The cosine is what those models were trained to make
meaningful; it lies in -1..1, so the view draws it on a fixed -1..1 axis. With several sentences
the result also holds the whole similarity matrix (A first, then the B's in the order given).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bertstudio.core import execution, notes
from bertstudio.core.errors import InputError
from bertstudio.core.notes import Note
from bertstudio.core.text_limits import require_text

if TYPE_CHECKING:
    from bertstudio.core.compare import RankingDiff
    from bertstudio.core.models import LoadedModel
    from bertstudio.core.progress import TaskControl

POOLINGS = ("mean", "cls")
MAX_SENTENCES = 200  # sentences B compared with A at once


@dataclass(frozen=True)
class SimilarityInput:
    """Sentence A, the sentences B it is compared with, and how token states become one embedding."""

    a: str
    bs: tuple[str, ...] = field(default_factory=tuple)
    pooling: str = "mean"


@dataclass(frozen=True)
class SimilarityScore:
    text: str  # a sentence B
    score: float  # cosine with A, -1..1

    def to_json(self) -> dict[str, object]:
        return {"text": self.text, "score": self.score}


@dataclass(frozen=True)
class SimilarityResult:
    """Cosines of A with each B (in the order given) and the matrix of every pair (A, B1, B2...)."""

    a: str
    pooling: str
    scores: tuple[SimilarityScore, ...]
    matrix: tuple[tuple[float, ...], ...]  # (1 + len(scores)) x (1 + len(scores)); row 0 is A
    cut: tuple[str, ...] = ()  # sentences longer than the model reads (cut to fit)
    max_length: int = 0

    @property
    def ranked(self) -> tuple[SimilarityScore, ...]:
        """Most similar first (what the bars show)."""
        return tuple(sorted(self.scores, key=lambda s: s.score, reverse=True))

    @property
    def notes(self) -> tuple[Note, ...]:
        if not self.cut:
            return ()
        return (notes.warning(
            f"{len(self.cut)} sentence(s) were longer than the {self.max_length} tokens the model reads and "
            "were cut; their embeddings cover the first part only.", "\n".join(self.cut)),)

    def to_json(self) -> dict[str, object]:
        return {"pooling": self.pooling, "scores": [s.to_json() for s in self.scores],
                "matrix": [list(row) for row in self.matrix], "notes": [n.to_json() for n in self.notes]}


def sentences_from_lines(text: str) -> tuple[str, ...]:
    """One sentence B per non-empty line."""
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def check_inputs(inputs: SimilarityInput) -> tuple[str, list[str], str]:
    """(A, the B's, pooling) or InputError naming what cannot work; no model needed."""
    require_text(inputs.a, "sentence A")
    kept = [b.strip() for b in inputs.bs if isinstance(b, str) and b.strip()]
    if not kept:
        raise InputError("There are no sentences B to compare with A.", hint="Type one sentence per line.")
    if len(kept) > MAX_SENTENCES:
        raise InputError(f"{len(kept)} sentences is too many; at most {MAX_SENTENCES} are compared at once.")
    return inputs.a, kept, pooling_of(inputs.pooling)


def pooling_of(value: object) -> str:
    pooling = str(value).strip().lower()
    if pooling not in POOLINGS:
        raise InputError(f"Unknown pooling {value!r}.", hint=f"Choose one of: {', '.join(POOLINGS)}.")
    return pooling


def pool(hidden: Any, mask: Any, pooling: str) -> Any:
    """One embedding per row: the mask-weighted mean of the token states, or the first token's state."""
    if pooling == "cls":
        return hidden[:, 0]
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)


def embed(loaded: LoadedModel, texts: Sequence[str], pooling: str, control: TaskControl | None = None) -> Any:
    """(len(texts), hidden) float32 embeddings on the CPU, through the batch engine (cancellable between batches)."""
    import torch

    return torch.from_numpy(embed_rows(loaded, texts, pooling, control)[1])


def embed_rows(loaded: LoadedModel, texts: Sequence[str], pooling: str,
               control: TaskControl | None = None) -> tuple[Any, Any]:
    """(the rows as the engine tokenized them, their (rows, hidden) float32 numpy embeddings): tokenized
    while the batches run (engine.encode_run)."""
    from bertstudio.core import engine

    encoded, found = engine.encode_run(loaded, list(texts), None, _pooled(loaded, pooling), control,
                                       verb="Embedded", unit="sentences")
    return encoded, _stacked(loaded, found)


def _pooled(loaded: LoadedModel, pooling: str) -> Any:
    """The engine's forward: each row's pooled last hidden state, in float32."""
    model = loaded.model

    def forward(batch: Any) -> Any:
        hidden = model(**batch.inputs).last_hidden_state.float()
        return pool(hidden, batch.inputs["attention_mask"], pooling)

    return forward


def _stacked(loaded: LoadedModel, found: list[Any]) -> Any:
    import numpy as np

    return np.stack(found) if found else np.zeros((0, int(loaded.model.config.hidden_size)), dtype=np.float32)


def longer_than_model(loaded: LoadedModel, texts: Sequence[str]) -> list[str]:
    """The texts `embed` cuts (more tokens than the model reads), for the note that says so."""
    return [t for t, long in zip(texts, execution.too_long(loaded, texts), strict=True) if long]


def pair_cosines(firsts: Any, seconds: Any) -> list[float]:
    """Row i's cosine of firsts[i] with seconds[i] (an STS file's pairs)."""
    import torch

    unit = torch.nn.functional.normalize
    return (unit(firsts, dim=-1) * unit(seconds, dim=-1)).sum(-1).clamp(-1, 1).tolist()


def cosine_matrix(embeddings: Any) -> Any:
    import torch

    unit = torch.nn.functional.normalize(embeddings, dim=-1)
    return (unit @ unit.T).clamp(-1.0, 1.0)


def run(loaded: LoadedModel, inputs: SimilarityInput, control: TaskControl) -> SimilarityResult:
    """Embed A and every B (one model pass per batch), then the cosines of all pairs."""
    a, bs, pooling = check_inputs(inputs)
    texts = [a, *bs]
    limit = loaded.info.max_length
    cut = tuple(longer_than_model(loaded, list(dict.fromkeys(texts))))
    matrix = cosine_matrix(embed(loaded, texts, pooling, control)).tolist()
    scores = tuple(SimilarityScore(b, float(matrix[0][i + 1])) for i, b in enumerate(bs))
    return SimilarityResult(a, pooling, scores, tuple(tuple(float(v) for v in row) for row in matrix), cut, limit)


def ranked_items(result: SimilarityResult) -> list[tuple[str, float]]:
    """(sentence B, cosine), most similar first."""
    return [(s.text, s.score) for s in result.ranked]


def compare(a: SimilarityResult, b: SimilarityResult) -> RankingDiff:
    """core.compare.RankingDiff of model A's cosines -> model B's (changed best match, rank moves)."""
    from bertstudio.core.compare import compare_rankings

    return compare_rankings(ranked_items(a), ranked_items(b))
