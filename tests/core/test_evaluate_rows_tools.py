"""Evaluate's row tools (issues 20 and 21): selected rows explained together equal the mean of
per-row explanations computed directly; nearest rows equal a brute-force cosine (on random vectors
and on the projector's mean-pooled embeddings of an evaluated file)."""

from __future__ import annotations

import numpy as np
import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.evaluate.neighbours import nearest

WORDS = "question answer sentence next random text model token word piece layer head attention".split()


@pytest.fixture(scope="module")
def sentiment(checkpoint_factory, tmp_path_factory):  # noqa: ANN001, ANN201
    """A tiny random BERT classifier evaluated on 12 rows of its own vocabulary (negative/positive)."""
    import csv

    from bertstudio.core.evaluate.evaluation import evaluate
    from bertstudio.core.evaluate.readers import read_dataset
    from bertstudio.core.models import LoadRequest, load_model

    data = tmp_path_factory.mktemp("rows") / "rows.csv"
    with data.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        for i in range(12):
            text = " ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 6 + i % 4))
            writer.writerow([text, ("negative", "positive")[i % 2]])
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    return loaded, evaluate(loaded, read_dataset("classification", data))


def test_selected_rows_pooled_equal_per_row_explanations(sentiment) -> None:  # noqa: ANN001
    from bertstudio.core.evaluate.explain_rows import explain_rows
    from bertstudio.core.explain.attribution import explain

    loaded, result = sentiment
    rows = (0, 3, 5, 8)
    pooled = explain_rows(loaded, result.task, result.dataset.examples, rows)
    assert pooled.method == "grad-x-input" and pooled.rows == rows
    sums: dict[str, list[float]] = {}
    seen: dict[str, set[int]] = {}
    for row in rows:
        direct = explain(loaded, "classification", (result.rows[row].text,), "grad-x-input")
        assert direct.target == result.rows[row].prediction  # each row's predicted class is explained
        for token, value, special in zip(direct.tokens, direct.attributions, direct.special, strict=True):
            if not special:
                sums.setdefault(token.lower(), []).append(abs(value))
                seen.setdefault(token.lower(), set()).add(row)
    found = {t.token: t for t in pooled.tokens}
    assert set(found) == set(sums)
    for token, values in sums.items():
        assert found[token].mean_abs == pytest.approx(float(np.mean(values)), rel=1e-5, abs=1e-9)
        assert found[token].count == len(values) and found[token].rows == len(seen[token])
    means = [t.mean_abs for t in pooled.tokens]
    assert means == sorted(means, reverse=True)
    # each row weighing the same: every row's |attributions| as shares of their sum, then the mean
    shares: dict[str, list[float]] = {}
    for row in rows:
        direct = explain(loaded, "classification", (result.rows[row].text,), "grad-x-input")
        kept = [(t.lower(), abs(v)) for t, v, s in zip(direct.tokens, direct.attributions, direct.special,
                                                       strict=True) if not s]
        for token, value in kept:
            shares.setdefault(token, []).append(value / sum(v for _, v in kept))
    weighed = explain_rows(loaded, result.task, result.dataset.examples, rows, share=True)
    assert weighed.share and {t.token for t in weighed.tokens} == set(shares)
    for token in weighed.tokens:
        assert token.mean_abs == pytest.approx(float(np.mean(shares[token.token])), rel=1e-5, abs=1e-9)


def test_selection_is_bounded_and_checked(sentiment) -> None:  # noqa: ANN001
    from bertstudio.core.evaluate.explain_rows import explain_rows
    from bertstudio.core.limits import MAX_EXPLAIN_ROWS

    loaded, result = sentiment
    examples = result.dataset.examples * (MAX_EXPLAIN_ROWS // len(result.dataset.examples) + 1)
    with pytest.raises(InputError, match=f"between 1 and {MAX_EXPLAIN_ROWS}"):
        explain_rows(loaded, result.task, examples, range(MAX_EXPLAIN_ROWS + 1))
    with pytest.raises(InputError, match="not in the evaluated file"):
        explain_rows(loaded, result.task, result.dataset.examples, (99,))
    with pytest.raises(InputError, match="Unknown attribution method"):
        explain_rows(loaded, result.task, result.dataset.examples, (0,), method="lime-ish")


def test_nearest_rows_equal_brute_force_cosine() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(200, 24)).astype(np.float32)
    vectors[17] = vectors[3] * 2.0  # the same direction: cosine 1
    vectors[50] = 0.0  # a zero vector: cosine 0 with everything
    for row, k in ((3, 5), (50, 7), (199, 199), (0, 1000)):
        found = nearest(vectors, row, k)
        brute = [(float(np.dot(vectors[row], v) / (np.linalg.norm(vectors[row]) * np.linalg.norm(v)))
                  if np.linalg.norm(v) and np.linalg.norm(vectors[row]) else 0.0, i)
                 for i, v in enumerate(vectors) if i != row]
        expected = sorted(brute, key=lambda pair: (-pair[0], pair[1]))[:k]
        assert [n.row for n in found] == [i for _, i in expected]
        np.testing.assert_allclose([n.score for n in found], [s for s, _ in expected], atol=1e-5)
    assert nearest(vectors, 3, 1)[0].row == 17
    with pytest.raises(InputError, match="between 1 and"):
        nearest(vectors, 3, 0)
    with pytest.raises(InputError, match="not in the evaluated file"):
        nearest(vectors, 200, 3)


def test_nearest_rows_job_embeds_mean_pooled_rows(sentiment) -> None:  # noqa: ANN001
    from bertstudio.core.evaluate.jobs import nearest_rows_job
    from bertstudio.core.evaluate.projector import embed
    from bertstudio.core.progress import TaskControl

    loaded, result = sentiment
    request = loaded.info.request
    found = nearest_rows_job(request, result.dataset, 2, 4, None, -1, TaskControl())
    vectors = embed(loaded, result.dataset, -1, "mean")
    np.testing.assert_allclose(found.vectors, vectors, atol=1e-5)
    assert [n.row for n in found.neighbours] == [n.row for n in nearest(vectors, 2, 4)] and not found.reused
    again = nearest_rows_job(request, result.dataset, 5, 3, vectors, -1, TaskControl())
    assert again.reused and [n.row for n in again.neighbours] == [n.row for n in nearest(vectors, 5, 3)]
