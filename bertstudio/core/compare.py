"""Differences between two models' results on the same input, for any task.

Written against plain values (dataclasses with `label`/`token`/`choice` and `score`, dicts,
tuples, numpy arrays) so every task's tab and CLI can use it: ranked candidates (fill-mask,
classification, multiple choice, NSP), answer spans (QA), entities (NER) and attention.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from bertstudio.core.errors import InputError

_NAME_KEYS = ("label", "token", "choice", "entity_group", "entity", "text", "word", "name")


def _get(item: Any, key: str, default: Any = None) -> Any:
    if isinstance(item, Mapping):
        return item.get(key, default)
    return getattr(item, key, default)


def _name(item: Any) -> str:
    if isinstance(item, tuple | list) and len(item) == 2:
        return str(item[0])
    for key in _NAME_KEYS:
        value = _get(item, key)
        if value is not None:
            return str(value)
    raise TypeError(f"cannot find a label in {item!r}")


def _score(item: Any) -> float:
    if isinstance(item, tuple | list) and len(item) == 2:
        return float(item[1])
    value = _get(item, "score")
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


# -- spans (QA answers) ------------------------------------------------------------------------
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
    start, end = _get(item, "start"), _get(item, "end")
    text = _get(item, "text") or _get(item, "answer") or ""
    score = _get(item, "score")
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


# -- entities (NER) ----------------------------------------------------------------------------
def entity_type(label: str) -> str:
    """'B-PER' -> 'PER', 'I-LOC' -> 'LOC', 'PER' -> 'PER', 'LABEL_3' -> 'LABEL_3'."""
    if len(label) > 2 and label[1] == "-" and label[0] in "BIESLU":
        return label[2:]
    return label


@dataclass(frozen=True)
class Entity:
    """One entity (or, for NER strategy "none", one tagged wordpiece) with character offsets."""

    label: str  # "PER" for grouped strategies; the full tag "B-PER" for "none"
    word: str
    score: float | None
    start: int | None
    end: int | None
    index: int | None = None  # token position, strategy "none" only

    @property
    def text(self) -> str:
        return self.word

    @property
    def entity_type(self) -> str:
        """The type without its BIO prefix: what the colour and legend are keyed on."""
        return entity_type(self.label)

    def to_json(self, grouped: bool = True) -> dict[str, object]:
        """The pipeline's shape: entity_group (or entity), score, word, start, end (index)."""
        data: dict[str, object] = {"entity_group" if grouped else "entity": self.label, "score": self.score,
                                   "word": self.word, "start": self.start, "end": self.end}
        if self.index is not None:
            data["index"] = self.index
        return data


def _diff_json(entity: Entity) -> dict[str, object]:
    return {"start": entity.start, "end": entity.end, "label": entity.label, "text": entity.word,
            "score": entity.score}


@dataclass(frozen=True)
class EntityDiff:
    """Entities by their character span: same, relabelled, only in A (removed), only in B (added)."""

    same: tuple[tuple[Entity, Entity], ...]
    relabelled: tuple[tuple[Entity, Entity], ...]
    removed: tuple[Entity, ...]
    added: tuple[Entity, ...]

    @property
    def changed(self) -> bool:
        return bool(self.relabelled or self.removed or self.added)

    def to_json(self) -> dict[str, object]:
        return {
            "changed": self.changed,
            "relabelled": [{"a": _diff_json(x), "b": _diff_json(y)} for x, y in self.relabelled],
            "removed": [_diff_json(e) for e in self.removed],
            "added": [_diff_json(e) for e in self.added],
            "same": len(self.same),
        }


def _entity(item: Any) -> Entity:
    if isinstance(item, Entity):
        return item
    label = _get(item, "label") or _get(item, "entity_group") or _get(item, "entity")
    text = _get(item, "text") or _get(item, "word") or ""
    score = _get(item, "score")
    return Entity(str(label), str(text), None if score is None else float(score),
                  int(_get(item, "start")), int(_get(item, "end")))


def _span_key(item: tuple[tuple[int | None, int | None], Entity]) -> tuple[int, int]:
    start, end = item[0]
    return (start or 0, end or 0)


def compare_entities(a: Iterable[Any], b: Iterable[Any]) -> EntityDiff:
    """Match entities of two models on the same text by exact character span (entities without
    offsets cannot be matched and are left out)."""
    by_span_a = {(e.start, e.end): e for e in map(_entity, a) if e.start is not None and e.end is not None}
    by_span_b = {(e.start, e.end): e for e in map(_entity, b) if e.start is not None and e.end is not None}
    same: list[tuple[Entity, Entity]] = []
    relabelled: list[tuple[Entity, Entity]] = []
    for span, ea in by_span_a.items():
        eb = by_span_b.get(span)
        if eb is not None:
            (same if ea.label == eb.label else relabelled).append((ea, eb))
    removed = tuple(e for span, e in sorted(by_span_a.items(), key=_span_key) if span not in by_span_b)
    added = tuple(e for span, e in sorted(by_span_b.items(), key=_span_key) if span not in by_span_a)
    return EntityDiff(tuple(same), tuple(relabelled), removed, added)


# -- attention ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class AttentionDiff:
    """B minus A, per layer and head: arrays (layers, heads, T, T) and summaries (layers, heads)."""

    difference: np.ndarray  # b - a
    mean_abs: np.ndarray  # (layers, heads)
    max_abs: np.ndarray  # (layers, heads)

    def most_changed(self, count: int = 5) -> list[tuple[int, int, float]]:
        """(layer, head, mean |difference|) of the heads that changed most."""
        flat = np.argsort(self.mean_abs, axis=None)[::-1][:count]
        heads = self.mean_abs.shape[1]
        return [(int(i // heads), int(i % heads), float(self.mean_abs.flat[i])) for i in flat]

    def to_json(self) -> dict[str, object]:
        return {"mean_abs": self.mean_abs.tolist(), "max_abs": self.max_abs.tolist(),
                "most_changed": [{"layer": layer, "head": head, "mean_abs": value}
                                 for layer, head, value in self.most_changed()]}


def attention_difference(a: Any, b: Any) -> AttentionDiff:
    """Per-head difference of two attention stacks of the same tokens: (layers, heads, T, T) each.

    Both models must have read the same tokens (the same tokenizer) and have the same number of
    layers and heads; a batch dimension of 1 (layers, 1, heads, T, T) is dropped.
    """
    x, y = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    x = x[:, 0] if x.ndim == 5 and x.shape[1] == 1 else x
    y = y[:, 0] if y.ndim == 5 and y.shape[1] == 1 else y
    if x.ndim != 4 or y.ndim != 4:
        raise InputError("Attention must have the shape layers × heads × tokens × tokens.")
    if x.shape != y.shape:
        raise InputError(
            f"The two models' attention cannot be compared head by head: shapes {x.shape} and {y.shape} "
            "(layers × heads × tokens × tokens) differ.",
            hint="Compare models of the same size that share a tokenizer (e.g. a model and its fine-tuned copy).",
        )
    difference = y - x
    magnitude = np.abs(difference)
    return AttentionDiff(difference, magnitude.mean(axis=(2, 3)), magnitude.max(axis=(2, 3)))
