"""NER's entities and how two models' entities differ on the same text (Compare).

Apart from the run code (__init__.py) so the tab, the CLI, Evaluate and the diff share one Entity
without numpy or transformers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bertstudio.core.compare import value_of


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
    label = value_of(item, "label") or value_of(item, "entity_group") or value_of(item, "entity")
    text = value_of(item, "text") or value_of(item, "word") or ""
    score = value_of(item, "score")
    return Entity(str(label), str(text), None if score is None else float(score),
                  int(value_of(item, "start")), int(value_of(item, "end")))


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
