"""Evaluate's curves and threshold tuner (issue 20): scikit-learn's curves and areas per class and
micro-averaged, metrics at a threshold equal scikit-learn's on the thresholded predictions, the
probabilities a real classifier's evaluation keeps, and the CLI's `curves` and `--threshold`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    confusion_matrix,
    f1_score,
    precision_recall_curve,
    precision_score,
    recall_score,
    roc_auc_score,
    roc_curve,
)

from bertstudio.core.errors import InputError
from bertstudio.core.evaluate import curves

DATA = Path(__file__).resolve().parents[1] / "data" / "evaluate"
CLASSES = ("negative", "neutral", "positive", "unused")


def _synthetic(rows: int = 400, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, rows)  # "unused" never occurs in the gold
    logits = rng.normal(size=(rows, 4)) + 2.0 * np.eye(4)[gold] * (rng.random(rows) < 0.7)[:, None]
    probabilities = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    probabilities[:5, 0] = 0.25  # ties
    return probabilities.astype(np.float32), [CLASSES[g] for g in gold]


def test_class_curves_equal_scikit_learn() -> None:
    probabilities, golds = _synthetic()
    for index, label in enumerate(CLASSES[:3]):
        truth = np.array([g == label for g in golds])
        found = curves.class_curves(probabilities, CLASSES, golds, label)
        precision, recall, thresholds = precision_recall_curve(truth, probabilities[:, index])
        fpr, tpr, roc_thresholds = roc_curve(truth, probabilities[:, index])
        np.testing.assert_array_equal(found.precision, precision)
        np.testing.assert_array_equal(found.recall, recall)
        np.testing.assert_array_equal(found.pr_thresholds, thresholds)
        np.testing.assert_array_equal(found.fpr, fpr)
        np.testing.assert_array_equal(found.tpr, tpr)
        np.testing.assert_array_equal(found.roc_thresholds, roc_thresholds)
        assert found.average_precision == average_precision_score(truth, probabilities[:, index])
        assert found.roc_auc == roc_auc_score(truth, probabilities[:, index])
        assert found.positives == truth.sum() and found.negatives == (~truth).sum()
    micro = curves.micro_curves(probabilities, CLASSES, golds)
    onehot = np.array([[g == c for c in CLASSES] for g in golds])
    assert micro.average_precision == average_precision_score(onehot.ravel(), probabilities.ravel())
    assert micro.roc_auc == roc_auc_score(onehot.ravel(), probabilities.ravel())
    summary = curves.summary(probabilities, CLASSES, golds)
    assert list(summary["average_precision"]) == list(CLASSES[:3])  # only classes in the gold
    assert summary["micro"]["roc_auc"] == micro.roc_auc


def test_metrics_at_a_threshold_equal_scikit_learn() -> None:
    probabilities, golds = _synthetic(rows=300, seed=1)
    for index, label in ((0, "negative"), (2, "positive")):
        table = curves.threshold_table(probabilities, CLASSES, golds, label)
        truth = np.array([g == label for g in golds])
        scores = probabilities[:, index]
        for threshold in (0.0, 0.1, 0.25, float(scores[7]), 0.5, 0.9, 1.0):
            at = table.at(threshold)
            predicted = scores >= threshold
            assert at.precision == pytest.approx(precision_score(truth, predicted, zero_division=0), abs=1e-12)
            assert at.recall == pytest.approx(recall_score(truth, predicted, zero_division=0), abs=1e-12)
            assert at.f1 == pytest.approx(f1_score(truth, predicted, zero_division=0), abs=1e-12)
            assert at.accuracy == pytest.approx(accuracy_score(truth, predicted), abs=1e-12)
            assert at.matrix == tuple(map(tuple, confusion_matrix(truth, predicted, labels=[False, True])))
        assert table.at(0.5).labels == (f"not {label}", label)


def test_binary_names_the_other_class_and_bad_input_is_refused() -> None:
    probabilities = np.array([[0.9, 0.1], [0.2, 0.8], [0.4, 0.6]], dtype=np.float32)
    golds = ["neg", "pos", "neg"]
    assert curves.default_positive(("neg", "pos")) == "pos"
    table = curves.threshold_table(probabilities, ("neg", "pos"), golds, "pos")
    at = table.at(0.5)
    assert at.labels == ("neg", "pos") and at.matrix == ((1, 1), (0, 1))
    assert curves.summary(probabilities, ("neg", "pos"), golds).keys() == {"average_precision", "roc_auc"}
    with pytest.raises(InputError, match="no class 'other'"):
        curves.threshold_table(probabilities, ("neg", "pos"), golds, "other")
    with pytest.raises(InputError, match="between 0 and 1"):
        curves.check_threshold(1.5)
    with pytest.raises(InputError, match="no class probabilities"):
        curves.class_curves(np.zeros((3, 1)), ("neg",), golds, "neg")


def test_a_real_classifier_keeps_the_pipeline_probabilities(real_models) -> None:  # noqa: ANN001
    from bertstudio.core.evaluate.evaluation import evaluate
    from bertstudio.core.evaluate.readers import read_dataset
    from bertstudio.core.models import LoadRequest, load_model

    loaded = load_model(LoadRequest(str(real_models["categorium-bert-tiny-topics-en"]), "classification"))
    result = evaluate(loaded, read_dataset("classification", DATA / "topics.csv"))
    assert result.probabilities.shape == (16, 27) and len(result.classes) == 27
    pipe = loaded.pipeline("text-classification")
    reference = pipe([r.text for r in result.rows], top_k=None)
    for row, expected in zip(result.probabilities, reference, strict=True):
        by_label = {item["label"]: item["score"] for item in expected}
        np.testing.assert_allclose(row, [by_label[c] for c in result.classes], atol=1e-6)
    assert [result.classes[i] for i in result.probabilities.argmax(1)] == [r.prediction for r in result.rows]
    assert set(curves.evaluation_summary(result)["roc_auc"]) == {str(g) for g in result.golds}


def test_cli_json_has_curves_and_the_threshold(real_models, capsys, tmp_path: Path) -> None:  # noqa: ANN001
    from bertstudio.cli import main
    from tests.fixtures.trained_sentiment import trained_sentiment

    model = str(trained_sentiment(real_models["all-minilm-l6-v2"]))
    data = str(DATA / "sentiment_heldout.csv")
    assert main(["evaluate", "--model", model, "--task", "classify", "--data", data, "--json",
                 "--threshold", "0.3"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert {"n", "metrics", "per_class", "confusion", "errors", "slices"} <= set(found)  # unchanged fields
    assert set(found["curves"]) == {"average_precision", "roc_auc"}
    assert set(found["curves"]["roc_auc"]) == {"negative", "positive"}
    at = found["threshold"]
    assert at["class"] == "positive" and at["threshold"] == 0.3
    assert at["confusion"]["labels"] == ["negative", "positive"]
    assert sum(map(sum, at["confusion"]["matrix"])) == found["n"]
    assert main(["evaluate", "--model", model, "--task", "classify", "--data", data, "--threshold", "1.5"]) == 1
    assert "between 0 and 1" in capsys.readouterr().err
    topics = str(real_models["categorium-bert-tiny-topics-en"])
    assert main(["evaluate", "--model", topics, "--task", "classify", "--data", str(DATA / "topics.csv"),
                 "--threshold", "0.5"]) == 1
    assert "--positive CLASS" in capsys.readouterr().err
