"""Linear CKA per layer pair (issue 33): equal to a numpy hand computation on two tiny models, 1.0 on
the diagonal of a model against itself, padding never in a mean, Cancel between batches; salience
agreement and size on the same pair."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bertstudio.core.compression.cka import cka_matrix, layer_means, linear_cka
from bertstudio.core.errors import TaskCancelled
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl

TEXTS = ["the cat sat", "a dog ran far away from the house today", "hello", "we read books and then we slept",
         "rain", "the bird sang in the garden all morning long"]


def _hand_means(folder: Path) -> np.ndarray:
    """Per row, alone (no padding at all), the mean of every token vector at every hidden state."""
    import torch
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModel.from_pretrained(folder).eval()
    rows = []
    with torch.no_grad():
        for text in TEXTS:
            states = model(**tokenizer(text, return_tensors="pt"), output_hidden_states=True).hidden_states
            rows.append(np.stack([s[0].double().mean(dim=0).numpy() for s in states]))
    return np.stack(rows)


def _hand_cka(x: np.ndarray, y: np.ndarray) -> float:
    x = x - x.mean(axis=0)
    y = y - y.mean(axis=0)
    cross = np.linalg.norm(y.T @ x, "fro") ** 2
    return float(cross / (np.linalg.norm(x.T @ x, "fro") * np.linalg.norm(y.T @ y, "fro")))


@pytest.fixture(scope="module")
def pair(checkpoint_factory) -> tuple[Path, Path]:  # noqa: ANN001
    head = "SequenceClassification"
    return checkpoint_factory("bert", head), checkpoint_factory("distilbert", head)


def test_cka_matrix_equals_a_numpy_hand_computation(pair: tuple[Path, Path]) -> None:
    a = load_model(LoadRequest(str(pair[0]), "classification"))
    b = load_model(LoadRequest(str(pair[1]), "classification"))
    means_a, means_b = layer_means(a, TEXTS), layer_means(b, TEXTS)
    hand_a, hand_b = _hand_means(pair[0]), _hand_means(pair[1])
    # Padding ignored: the engine pads rows of different lengths in one batch; the hand means saw none.
    np.testing.assert_allclose(means_a.vectors, hand_a, atol=1e-5)
    np.testing.assert_allclose(means_b.vectors, hand_b, atol=1e-5)
    matrix = cka_matrix(means_a.vectors, means_b.vectors)
    assert matrix.shape == (a.info.layers + 1, b.info.layers + 1) == (3, 3)
    expected = np.array([[_hand_cka(hand_a[:, i], hand_b[:, j]) for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(matrix, expected, atol=1e-6)
    assert not np.allclose(expected, expected[0, 0])  # the layers do differ: the test compares something


def test_a_model_against_itself_is_one_on_the_diagonal(pair: tuple[Path, Path]) -> None:
    a = load_model(LoadRequest(str(pair[0]), "classification"))
    vectors = layer_means(a, TEXTS).vectors
    matrix = cka_matrix(vectors, vectors)
    np.testing.assert_allclose(np.diag(matrix), 1.0, atol=1e-9)
    np.testing.assert_allclose(matrix, matrix.T, atol=1e-12)
    assert (matrix <= 1.0 + 1e-9).all()


def test_padding_and_batching_do_not_change_the_means(pair: tuple[Path, Path], monkeypatch) -> None:  # noqa: ANN001
    from bertstudio.core import engine

    a = load_model(LoadRequest(str(pair[0]), "classification"))
    together = layer_means(a, TEXTS).vectors  # one padded batch: rows of 1 to 10 words
    real = engine.run
    monkeypatch.setattr(engine, "run", lambda *args, **kw: real(*args, **{**kw, "max_rows": 1}))
    alone = layer_means(a, TEXTS).vectors  # one row per batch: no padding
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_linear_cka_invariant_to_rotation_and_scale() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 8))
    rotation, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    assert linear_cka(x, 3.0 * x @ rotation) == pytest.approx(1.0)
    assert linear_cka(x, rng.normal(size=(40, 5))) < 0.5
    assert np.isnan(linear_cka(x, np.ones((40, 3))))  # a constant layer: undefined, not 0


def test_cancel_stops_between_batches(pair: tuple[Path, Path]) -> None:
    a = load_model(LoadRequest(str(pair[0]), "classification"))
    control = TaskControl()
    control.request_stop()
    with pytest.raises(TaskCancelled):
        layer_means(a, TEXTS, control=control)

