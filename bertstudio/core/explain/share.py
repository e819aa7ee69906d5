"""A part of long work reporting as its share of the whole: one progress bar over several steps.

"All methods" runs seven explanations and an explanation may add its faithfulness: each part
reports 0-1 of its own, and the bar a person sees moves once from 0 to 1. Cancel is the whole's.
"""

from __future__ import annotations

from bertstudio.core.progress import Relay, TaskControl


class Share(Relay):
    """Progress 0-1 of a part mapped to [start, end] of `outer`'s, its messages prefixed."""

    def __init__(self, outer: TaskControl, start: float, end: float, prefix: str = "") -> None:
        super().__init__(outer)
        self.start, self.end, self.prefix = start, end, prefix

    def report(self, message: str, fraction: float | None = None, payload: object = None) -> None:
        share = None if fraction is None else self.start + (self.end - self.start) * min(1.0, max(0.0, fraction))
        self.outer.report(f"{self.prefix}{message}", share, payload)
