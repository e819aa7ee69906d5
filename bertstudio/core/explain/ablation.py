"""Switch attention heads off, as `head_mask = 0` did before transformers 5 removed it.

PLACEHOLDER INTERFACE (the explain work fills it in): zero each chosen head's slice of the
attention output before the output projection (a forward pre-hook), removed on exit.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def heads_switched_off(model: Any, heads: tuple[tuple[int, int], ...]) -> Iterator[None]:
    raise NotImplementedError("head ablation is being built")
    yield
