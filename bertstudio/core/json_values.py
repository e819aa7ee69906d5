"""Numbers read from JSON written by a run (events, log history): a bool, NaN or text is no number."""

from __future__ import annotations

import math
from typing import Any


def finite_number(value: Any) -> float | None:
    """The value as a finite float, or None (JSON's true is not 1, and NaN/inf are not points)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def step_number(value: Any) -> int | None:
    """The value as a training step (a non-negative int), or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
