"""Explain for Similarity: which tokens of sentence A raise its cosine with sentence B.

F is the cosine of A's pooled embedding with B's, B's embedding computed once and held fixed, so
every attribution method (and Integrated Gradients' completeness) speaks of A's tokens only; the
baseline is A's own sequence with its words padded, as for every other task. F lies in -1..1 (it is
no probability), so it is labelled "value of ...", the way a regression head's output is.
--target picks the pooling: "mean" (default, sentence-transformers') or "cls".
"""

from __future__ import annotations

from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.explain.inputs import WrongParts
from bertstudio.core.explain.targets import Prepared, encode, finish, wide
from bertstudio.core.models import LoadedModel
from bertstudio.core.tasks.similarity import SimilarityInput, pool
from bertstudio.core.text_limits import require_text

POOLING_NAMES = {"mean": "mean pooling", "cls": "[CLS] pooling"}


def texts_of(inputs: Any) -> tuple[str, ...]:
    """Sentence A and the first sentence B (the one explained)."""
    bs = tuple(getattr(inputs, "bs", ()) or ())
    return (str(inputs.a), str(bs[0]) if bs else "")


def inputs_of(texts: tuple[str, ...]) -> SimilarityInput:
    if len(texts) != 2:
        raise WrongParts("two sentences: A and B", 'Give sentence A and sentence B: "A" "B".')
    return SimilarityInput(texts[0], (texts[1],))


def target_of(result: Any) -> str | None:
    """The pooling the result was computed with (the explained cosine is that one)."""
    pooling = getattr(result, "pooling", None)
    return str(pooling) if pooling in POOLING_NAMES else None


def _pooled(outputs: Any, mask: Any, pooling: str) -> Any:
    return pool(wide(outputs.last_hidden_state), mask, pooling)


def prepare(loaded: LoadedModel, texts: tuple[str, ...], target: str | None) -> Prepared:
    """A's inputs; F(outputs) = cosine(pool(A's states), B's embedding), one value per batch row."""
    import torch

    if len(texts) != 2:
        raise InputError("Similarity is explained for one pair: sentence A and sentence B.")
    require_text(texts[0], "sentence A")
    require_text(texts[1], "sentence B")
    pooling = (target or "mean").strip().lower()
    if pooling not in POOLING_NAMES:
        raise InputError(f"Unknown similarity target {target!r}.", hint="Use mean or cls (the pooling).")
    inputs = encode(loaded, texts[0])
    other = encode(loaded, texts[1])
    with torch.no_grad():  # held fixed: no gradient flows into B
        fixed = _pooled(loaded.model(**other), other["attention_mask"], pooling).detach()

    def probability(outputs: Any) -> Any:
        # A is encoded alone (no padding): every position its outputs have is a token of A, also
        # when faithfulness deleted some (a shorter sequence), so the pooling mask is all ones.
        states = outputs.last_hidden_state
        mask = torch.ones(states.shape[:2], dtype=torch.long, device=states.device)
        return torch.nn.functional.cosine_similarity(_pooled(outputs, mask, pooling), fixed.to(states.device), dim=-1)

    def loss(outputs: Any) -> Any:  # head importance: how far A's embedding is from B's
        return (1.0 - probability(outputs)).sum()

    return finish(loaded, inputs, ((texts[0],),), target=pooling,
                   target_label=f"value of cosine(A, B), {POOLING_NAMES[pooling]}",
                   probability=probability, targets=tuple(POOLING_NAMES.items()), loss=loss,
                   loss_name="1 − cosine of A with B")


def summary(result: Any) -> str:
    """The cosines in a few lines (head pruning: intact and pruned side by side)."""
    return "\n".join(f"{s.score:+.4f}  {s.text}" for s in result.scores)
