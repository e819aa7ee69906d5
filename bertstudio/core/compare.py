"""Differences between two models' ranked candidates on the same input, for every task that ranks.

Written against plain values (dataclasses with `label`/`token`/`choice` and `score`, dicts,
tuples) so fill-mask, classification, multiple choice, NSP and similarity share it. A task whose
result is not a ranking keeps its own difference in its package (QA's spans: tasks/qa/spans.py,
NER's entities: tasks/ner/entities.py, attention: tasks/attention/diff.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bertstudio.core.errors import InputError

_NAME_KEYS = ("label", "token", "choice", "entity_group", "entity", "text", "word", "name")


def value_of(item: Any, key: str, default: Any = None) -> Any:
    """`item[key]` of a mapping, else its attribute `key`: results are dicts or dataclasses."""
    if isinstance(item, Mapping):
        return item.get(key, default)
    return getattr(item, key, default)


def _name(item: Any) -> str:
    if isinstance(item, tuple | list) and len(item) == 2:
        return str(item[0])
    for key in _NAME_KEYS:
        value = value_of(item, key)
        if value is not None:
            return str(value)
    raise TypeError(f"cannot find a label in {item!r}")


def _score(item: Any) -> float:
    if isinstance(item, tuple | list) and len(item) == 2:
        return float(item[1])
    value = value_of(item, "score")
    if value is None:
        raise TypeError(f"cannot find a score in {item!r}")
    return float(value)


# -- ranked candidates -------------------------------------------------------------------------
@dataclass(frozen=True)
class ScoreDelta:
    label: str
    score_a: float | None  # None: not among model A's candidates
    score_b: float | None
    rank_a: int | None  # 1 = best
    rank_b: int | None

    @property
    def delta(self) -> float | None:
        if self.score_a is None or self.score_b is None:
            return None
        return self.score_b - self.score_a

    def to_json(self) -> dict[str, object]:
        return {"label": self.label, "score_a": self.score_a, "score_b": self.score_b,
                "delta": self.delta, "rank_a": self.rank_a, "rank_b": self.rank_b}


@dataclass(frozen=True)
class RankingDiff:
    """How model B's ranking differs from model A's on the same input."""

    top_a: str | None
    top_b: str | None
    deltas: tuple[ScoreDelta, ...]  # every label seen by either model, largest change first
    labels_note: str = ""  # the two models name different label sets (classifiers): why tops do not compare

    @property
    def comparable(self) -> bool:
        """False when the models' labels differ: "food" -> "positive" is no change of mind."""
        return not self.labels_note

    @property
    def top_changed(self) -> bool:
        return self.comparable and self.top_a != self.top_b

    @property
    def max_abs_delta(self) -> float:
        return max((abs(d.delta) for d in self.deltas if d.delta is not None), default=0.0)

    def delta_of(self, label: str) -> ScoreDelta | None:
        return next((d for d in self.deltas if d.label == label), None)

    def to_json(self) -> dict[str, object]:
        return {"top_a": self.top_a, "top_b": self.top_b,
                "top_changed": self.top_changed if self.comparable else None,
                "labels_note": self.labels_note or None,
                "max_abs_delta": self.max_abs_delta, "deltas": [d.to_json() for d in self.deltas]}


def compare_rankings(a: Iterable[Any], b: Iterable[Any]) -> RankingDiff:
    """Compare two candidate lists, each best first: items with label/token/choice and score.

    Fill-mask candidates, classification label scores, multiple-choice endings, NSP labels,
    dicts such as {"label":..., "score":...} or (label, score) tuples all work.
    """
    items_a, items_b = list(a), list(b)
    scores_a = {_name(i): _score(i) for i in items_a}
    scores_b = {_name(i): _score(i) for i in items_b}
    rank_a = {_name(i): r for r, i in enumerate(items_a, start=1)}
    rank_b = {_name(i): r for r, i in enumerate(items_b, start=1)}
    labels = list(dict.fromkeys(list(scores_a) + list(scores_b)))
    deltas = [ScoreDelta(label, scores_a.get(label), scores_b.get(label), rank_a.get(label), rank_b.get(label))
              for label in labels]
    # Largest change first; a label only one model proposes counts as the largest change.
    deltas.sort(key=lambda d: (-(abs(d.delta) if d.delta is not None else float("inf")), labels.index(d.label)))
    return RankingDiff(
        top_a=_name(items_a[0]) if items_a else None,
        top_b=_name(items_b[0]) if items_b else None,
        deltas=tuple(deltas),
    )


def label_sets_note(labels_a: Iterable[str], labels_b: Iterable[str]) -> str:
    """"" when two classifiers name the same labels; else a sentence saying how their labels differ
    (a head trained for other labels: its top label and scores are not a change of A's)."""
    set_a, set_b = set(labels_a), set(labels_b)
    if set_a == set_b:
        return ""
    shared = len(set_a & set_b)
    return (f"The two models have different labels (A: {len(set_a)}, B: {len(set_b)}, {shared} shared): "
            "their top labels cannot be compared"
            + (", and score changes are shown for the shared labels only." if shared else "."))


def with_label_sets(diffs: Sequence[RankingDiff], labels_a: Iterable[str], labels_b: Iterable[str]) -> tuple[
        RankingDiff, ...]:
    """The diffs, each saying so when the two models' label sets differ."""
    note = label_sets_note(labels_a, labels_b)
    return tuple(replace(d, labels_note=note) for d in diffs) if note else tuple(diffs)


def compare_ranking_lists(a: Sequence[Iterable[Any]], b: Sequence[Iterable[Any]]) -> tuple[RankingDiff, ...]:
    """Row by row (batch classification, one list per mask in fill-mask)."""
    if len(a) != len(b):
        raise InputError(f"The two results have {len(a)} and {len(b)} rows; they cannot be compared.")
    return tuple(compare_rankings(x, y) for x, y in zip(a, b, strict=True))
