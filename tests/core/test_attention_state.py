"""The attention view state (observable, no Qt) and the pooled bundle the tab draws, headless."""

from __future__ import annotations

import numpy as np
import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.tasks.attention.bundle import (
    CELL_MAX,
    GAP_INDEX,
    make_bundle,
    mosaic_indices,
    pooled,
    with_mean_column,
)
from bertstudio.core.tasks.attention.state import AttentionViewState, ViewSettings
from bertstudio.core.tasks.attention.view import ViewOptions


def test_state_notifies_changed_fields_once() -> None:
    state = AttentionViewState()
    seen: list[frozenset[str]] = []
    detail: list[frozenset[str]] = []
    state.subscribe(seen.append)
    state.subscribe(detail.append, only={"layer", "head"})
    assert state.update(layer=2) == {"layer"}
    assert state.update(layer=2) == frozenset()  # no change, no notification
    state.update(colours="magma")
    assert seen == [{"layer"}, {"colours"}] and detail == [{"layer"}]
    with state.batch():
        state.update(layer=1)
        state.update(head=3, quadrant="A->B")
        assert len(seen) == 2  # nothing announced inside a batch
    # the head view follows the detail head (one head in view): heads_shown changed with it
    assert seen[-1] == {"layer", "head", "heads_shown", "quadrant"} and detail[-1] == seen[-1]
    assert state.heads_shown == (3,)
    assert (state.layer, state.head, state.quadrant) == (1, 3, "A->B")
    assert state.settings.options(pair=False) == ViewOptions(False, True, "all")
    with pytest.raises(InputError, match="quadrant"):
        state.update(quadrant="A->C")
    with pytest.raises(AttributeError):
        state.update(nonsense=1)


def test_state_clamps_to_the_model_and_moves_round_it() -> None:
    state = AttentionViewState(ViewSettings(layer=9, head=15, heads_shown=(0, 13), selected=((1, 1), (8, 0))))
    state.set_shape(6, 12)
    assert (state.layer, state.head, state.heads_shown, state.selected) == (5, 11, (0,), ((1, 1),))
    state.move(0, 1)  # past the last head of the last layer: back to the first
    assert (state.layer, state.head) == (0, 0)
    state.move(0, -1)
    assert (state.layer, state.head) == (5, 11)
    state.move(-1, 0)
    assert (state.layer, state.head) == (4, 11)


def test_state_selection_and_workspace_round_trip() -> None:
    state = AttentionViewState()
    state.set_shape(6, 12)
    state.toggle_selected(3, 7, add=False)
    state.toggle_selected(1, 2, add=True)
    assert state.selected == ((1, 2), (3, 7))
    state.toggle_selected(3, 7, add=True)  # Ctrl+click again: off
    assert state.selected == ((1, 2),)
    state.toggle_selected(0, 0, add=False)  # a plain click: only that head
    assert state.selected == ((0, 0),)
    state.update(layer=4, colours="inferno", hide_special=True, heads_shown=(1, 2))
    saved = state.to_json()
    other = AttentionViewState()
    other.set_shape(6, 12)
    other.restore({**saved, "quadrant": "bogus", "unknown": 1})
    assert other.settings == state.settings


def test_pooling_mosaic_and_bundle() -> None:
    rng = np.random.default_rng(0)
    att = rng.random((2, 3, 300, 300), dtype=np.float32)
    att /= att.sum(-1, keepdims=True)
    cells = pooled(att, CELL_MAX)
    assert cells.shape == (2, 3, 100, 100)  # 300 / ceil(300 / 128) = 100
    np.testing.assert_array_equal(cells[1, 2, 4, 7], att[1, 2, 12:15, 21:24].max())
    assert pooled(att[..., :50, :50]).shape[-2:] == (50, 50)  # short inputs are not pooled
    columns = with_mean_column(att[..., :8, :8])
    np.testing.assert_allclose(columns[:, -1], att[..., :8, :8].mean(axis=1), atol=1e-6)
    image = mosaic_indices(columns, gap=1)
    assert image.shape == (2 * 9 - 1, 4 * 9 - 1) and image[8, 0] == GAP_INDEX
    assert image[:8, :8].max() == 254  # each cell scaled to its own maximum

    class _Result:  # what make_bundle reads of an AttentionResult
        attentions = att[..., :20, :20] / att[..., :20, :20].sum(-1, keepdims=True)
        length, cls_index, sep_indices = 20, 0, (19,)
        norms = summed_norms = None  # no value-weighted norms asked for

    bundle = make_bundle(_Result())  # type: ignore[arg-type]
    np.testing.assert_allclose(bundle.mean, _Result.attentions.mean(axis=1), atol=1e-6)
    np.testing.assert_allclose(bundle.thumbnails[:, -1], bundle.mean, atol=1e-6)
    np.testing.assert_allclose(bundle.rollout.sum(-1), 1.0, atol=1e-5)
    assert bundle.statistics.entropy.shape == (2, 3)
    np.testing.assert_allclose(bundle.layer_mean(1), bundle.mean[1])


def test_weighting_is_a_view_field_and_checked() -> None:
    state = AttentionViewState()
    seen: list[frozenset[str]] = []
    state.subscribe(seen.append, only={"quadrant"} | {"weighting"})
    state.update(weighting="value-weighted norms")
    assert state.settings.norms and seen == [{"weighting"}]
    with pytest.raises(InputError, match="weighting"):
        state.update(weighting="probabilities")
    restored = AttentionViewState()
    restored.restore(state.to_json())
    assert restored.settings.norms
