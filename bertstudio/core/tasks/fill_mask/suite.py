"""What behavioural suites (core/suites/masks.py) need of fill-mask: a masked LM's words for a
template's {mask} (CheckList's mask filling), as this task predicts them."""

from __future__ import annotations

from bertstudio.core.models import LoadedModel
from bertstudio.core.tasks.fill_mask import predict


def first_mask_words(loaded: LoadedModel, text: str, top_k: int) -> list[tuple[str, float]]:
    """(word, probability) of the top-k candidates at the text's first mask, best first."""
    return [(c.token, c.score) for c in predict(loaded, text, top_k).masks[0].candidates]
