"""A pinned input and its edit explained side by side (core/explain/pinned.py): each side equals its own
explanation for the pinned input's target, and the aligned difference is edit - pinned token by token."""

from __future__ import annotations

import pytest

from bertstudio.core.models import LoadRequest, load_uncached


def test_both_sides_equal_their_own_explanations_and_the_difference_is_aligned(checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.explain.attribution import explain
    from bertstudio.core.explain.pinned import explain_pinned

    loaded = load_uncached(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    pinned, edit = ("a good film about a big dog .",), ("a bad film about a dog .",)
    pair = explain_pinned(loaded, "classification", pinned, edit, "occlusion")
    alone_a = explain(loaded, "classification", pinned, "occlusion")
    other = next(v for v, _ in alone_a.targets if v != alone_a.target)  # B is explained for A's target, not its own
    pair_other = explain_pinned(loaded, "classification", pinned, edit, "occlusion")
    alone_b = explain(loaded, "classification", edit, "occlusion", str(alone_a.target))
    assert pair.pinned.attributions == alone_a.attributions and pair.edit.attributions == alone_b.attributions
    assert pair.edit.target == pair.pinned.target and pair_other.aligned == pair.aligned and other
    tokens = [(a.token, a.pinned is not None, a.edit is not None) for a in pair.aligned]
    assert ("good", True, False) in tokens and ("bad", False, True) in tokens and ("big", True, False) in tokens
    assert [t for t, _, in_b in tokens if in_b] == list(alone_b.tokens)  # B's tokens in order
    assert [t for t, in_a, _ in tokens if in_a] == list(alone_a.tokens)  # A's tokens in order
    film = next(a for a in pair.aligned if a.token == "film")
    assert film.difference == pytest.approx(alone_b.attributions[alone_b.tokens.index("film")]
                                            - alone_a.attributions[alone_a.tokens.index("film")])
    good = next(a for a in pair.aligned if a.token == "good")  # removed: its push is lost
    assert good.edit is None and good.difference == -good.pinned
    bad = next(a for a in pair.aligned if a.token == "bad")  # added: its push is gained
    assert bad.pinned is None and bad.difference == bad.edit
    data = pair.to_json()
    assert data["method"] == "Occlusion" and len(data["aligned"]) == len(pair.aligned)
