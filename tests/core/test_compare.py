"""Pure differences between two results: rankings, spans, entities, attention."""

from __future__ import annotations

import numpy as np
import pytest

from bertstudio.core.compare import compare_ranking_lists, compare_rankings, label_sets_note, with_label_sets
from bertstudio.core.errors import InputError
from bertstudio.core.tasks.attention.diff import attention_difference
from bertstudio.core.tasks.fill_mask import Candidate
from bertstudio.core.tasks.ner.entities import compare_entities
from bertstudio.core.tasks.qa.spans import compare_spans


def test_rankings_top_change_deltas_and_ranks() -> None:
    a = [{"label": "positive", "score": 0.7}, {"label": "negative", "score": 0.3}]
    b = [("negative", 0.6), ("positive", 0.4)]
    diff = compare_rankings(a, b)
    assert diff.top_a == "positive" and diff.top_b == "negative" and diff.top_changed
    pos = diff.delta_of("positive")
    assert pos.delta == pytest.approx(-0.3) and (pos.rank_a, pos.rank_b) == (1, 2)
    assert diff.max_abs_delta == pytest.approx(0.3)
    assert diff.to_json()["top_changed"] is True


def test_classifiers_with_different_labels_claim_no_top_change() -> None:
    """27 topics against positive/negative: "food -> positive" is no change of mind, and says why."""
    a = [("food", 0.9), ("sports", 0.1)]
    b = [("positive", 0.6), ("negative", 0.4)]
    (diff,) = with_label_sets(compare_ranking_lists([a], [b]), ["food", "sports"], ["positive", "negative"])
    assert not diff.comparable and not diff.top_changed and (diff.top_a, diff.top_b) == ("food", "positive")
    assert "different labels (A: 2, B: 2, 0 shared)" in diff.labels_note
    data = diff.to_json()
    assert data["top_changed"] is None and data["labels_note"] == diff.labels_note
    same = with_label_sets(compare_ranking_lists([a], [a[::-1]]), ["food", "sports"], ["sports", "food"])
    assert same[0].comparable and same[0].to_json()["labels_note"] is None
    assert "shared labels only" in label_sets_note(["a", "b", "c"], ["a", "x"])


def test_rankings_of_fill_mask_candidates_with_labels_only_one_side_has() -> None:
    a = [Candidate("paris", 1, 0.5), Candidate("rome", 2, 0.2)]
    b = [Candidate("paris", 1, 0.45), Candidate("london", 3, 0.3)]
    diff = compare_rankings(a, b)
    assert not diff.top_changed
    assert [d.label for d in diff.deltas[:2]] == ["rome", "london"]  # only one model proposes them: first
    assert diff.delta_of("rome").score_b is None and diff.delta_of("rome").delta is None
    assert diff.delta_of("paris").delta == pytest.approx(-0.05)
    assert compare_rankings([], []).top_a is None


def test_ranking_lists_must_align() -> None:
    assert len(compare_ranking_lists([[("a", 1.0)]] * 2, [[("a", 0.5)]] * 2)) == 2
    with pytest.raises(InputError, match="rows"):
        compare_ranking_lists([[("a", 1.0)]], [])


def test_spans() -> None:
    same = compare_spans({"start": 3, "end": 8, "text": "paris", "score": 0.9}, {"start": 3, "end": 8, "score": 0.7})
    assert not same.changed and same.overlap == 1.0 and same.score_delta == pytest.approx(-0.2)
    moved = compare_spans((0, 10), (5, 15))
    assert moved.changed and moved.overlap == pytest.approx(5 / 15)
    assert compare_spans((0, 4), None).changed and compare_spans(None, None).overlap == 1.0


def test_entities() -> None:
    a = [{"start": 0, "end": 4, "entity_group": "PER", "word": "john"},
         {"start": 14, "end": 19, "entity_group": "LOC", "word": "paris"},
         {"start": 24, "end": 28, "entity_group": "LOC", "word": "rome"}]
    b = [{"start": 0, "end": 4, "entity_group": "PER", "word": "john"},
         {"start": 14, "end": 19, "entity_group": "PER", "word": "paris"},
         {"start": 30, "end": 34, "entity": "B-LOC", "word": "nice"}]
    diff = compare_entities(a, b)
    assert diff.changed and len(diff.same) == 1
    assert [(x.label, y.label) for x, y in diff.relabelled] == [("LOC", "PER")]
    assert [e.text for e in diff.removed] == ["rome"] and [e.label for e in diff.added] == ["B-LOC"]
    assert not compare_entities(a, a).changed


def test_attention_difference_per_head() -> None:
    rng = np.random.default_rng(0)
    a = rng.random((2, 3, 4, 4), dtype=np.float32)
    b = a.copy()
    b[1, 2] += 0.5
    b[0, 1, 0, 0] += 0.1
    diff = attention_difference(a, b)
    assert diff.difference.shape == (2, 3, 4, 4)
    assert diff.mean_abs.shape == (2, 3) and diff.mean_abs[1, 2] == pytest.approx(0.5)
    assert diff.max_abs[0, 1] == pytest.approx(0.1)
    assert diff.most_changed(2)[0][:2] == (1, 2) and diff.most_changed(2)[1][:2] == (0, 1)
    assert attention_difference(a[:, None], b[:, None]).mean_abs.shape == (2, 3)  # batch of one dropped
    with pytest.raises(InputError, match="differ"):
        attention_difference(a, a[:, :, :3, :3])
