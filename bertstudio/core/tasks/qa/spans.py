"""How model B's answer differs from model A's on the same question and context (Compare).

Plain values (an Answer, a dict with start/end/text/score, a (start, end) pair, or None) so the QA
tab, the CLI and tests read it alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bertstudio.core.compare import value_of


@dataclass(frozen=True)
class SpanDiff:
    """Two answer spans (character offsets into the same context)."""

    span_a: tuple[int, int] | None
    span_b: tuple[int, int] | None
    text_a: str
    text_b: str
    score_a: float | None
    score_b: float | None
    overlap: float  # characters shared / characters covered by either (0..1)

    @property
    def changed(self) -> bool:
        return self.span_a != self.span_b

    @property
    def score_delta(self) -> float | None:
        return None if self.score_a is None or self.score_b is None else self.score_b - self.score_a

    def to_json(self) -> dict[str, object]:
        return {"changed": self.changed, "span_a": self.span_a, "span_b": self.span_b, "text_a": self.text_a,
                "text_b": self.text_b, "score_delta": self.score_delta, "overlap": self.overlap}


def _span(item: Any) -> tuple[tuple[int, int] | None, str, float | None]:
    if item is None:
        return None, "", None
    if isinstance(item, tuple | list):
        return (int(item[0]), int(item[1])), "", None
    start, end = value_of(item, "start"), value_of(item, "end")
    text = value_of(item, "text") or value_of(item, "answer") or ""
    score = value_of(item, "score")
    span = None if start is None or end is None else (int(start), int(end))
    return span, str(text), None if score is None else float(score)


def compare_spans(a: Any, b: Any) -> SpanDiff:
    """Compare two answers: objects/dicts with start, end, text/answer, score; or (start, end); or None."""
    span_a, text_a, score_a = _span(a)
    span_b, text_b, score_b = _span(b)
    overlap = 0.0
    if span_a and span_b:
        shared = max(0, min(span_a[1], span_b[1]) - max(span_a[0], span_b[0]))
        covered = max(span_a[1], span_b[1]) - min(span_a[0], span_b[0])
        overlap = shared / covered if covered > 0 else 1.0
    elif span_a is None and span_b is None:
        overlap = 1.0
    return SpanDiff(span_a, span_b, text_a, text_b, score_a, score_b, overlap)
