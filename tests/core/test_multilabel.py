"""Multi-label classification (issue 41 item 1): `|` cells read into a binary matrix, a trained head saved
with problem_type multi_label_classification, Evaluate's metrics equal scikit-learn's on the binarized
matrix at the threshold, curves per label, and one clear line for each bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bertstudio.core.errors import InputError
from bertstudio.core.tasks.classification import multilabel
from bertstudio.core.training.config import TrainConfig
from tests.conftest import run_cli

NOUNS = ["cat", "dog", "car", "house", "book", "game", "film", "tree"]
GOOD, BAD = ["good", "new", "big", "fast"], ["bad", "old", "small", "slow"]


def multilabel_csv(path: Path, count: int = 80) -> Path:
    """pos/neg from the adjective, `animal` for cats and dogs, and a few rows with no label at all."""
    rows = ["text,label"]
    for i in range(count):
        noun = NOUNS[i % len(NOUNS)]
        labels = ["pos" if i % 2 == 0 else "neg"] + (["animal"] if noun in ("cat", "dog") else [])
        cell = "" if i % 16 == 15 else "|".join(labels)
        rows.append(f"the {noun} is {(GOOD if i % 2 == 0 else BAD)[(i // 2) % 4]},{cell}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, checkpoint_factory) -> tuple[Path, Path]:  # noqa: ANN001
    from bertstudio.core.training.engine import train

    folder = tmp_path_factory.mktemp("multilabel")
    data = multilabel_csv(folder / "ml.csv")
    result = train(TrainConfig(task="classify", model=str(checkpoint_factory("bert", "Model")), train_file=str(data),
                               output_dir=str(folder / "model"), eval_share=0.2, max_steps=24, batch_size=8,
                               learning_rate=3e-3, max_length=16, seed=0, multi_label=True))
    return Path(result.output_dir), data


def test_a_single_label_run_only_notes_a_label_on_one_row(tmp_path: Path) -> None:
    from bertstudio.core.training.trainable import TRAINABLE

    single = tmp_path / "single.csv"
    single.write_text("text,label\na,x\nb,x\nc,y\n", encoding="utf-8")
    data = TRAINABLE["text-classification"].read(TrainConfig(train_file=str(single), output_dir="o", eval_share=0))
    assert data.labels == ["x", "y"] and any("'y' appear on only one row" in note for note in data.notes)


def test_cells_binarize_with_sorted_names_and_empty_rows(tmp_path: Path) -> None:
    matrix, names = multilabel.binarize(["b|a", "", "c", " a | c "])
    assert names == ["a", "b", "c"]
    assert matrix.tolist() == [[1, 1, 0], [0, 0, 0], [0, 0, 1], [1, 0, 1]]
    read, read_names = multilabel.read_label_matrix(multilabel_csv(tmp_path / "ml.csv", 16))
    assert read_names == ["animal", "neg", "pos"] and read.shape == (16, 3) and read[15].sum() == 0
    with pytest.raises(InputError, match="'d'"):
        multilabel.binarize(["a|d"], ["a", "b"])


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 30), st.integers(2, 6), st.integers(0, 2**31 - 1), st.floats(0.05, 0.95))
def test_scores_are_sklearns_on_the_thresholded_matrix(rows: int, labels: int, seed: int, threshold: float) -> None:
    from sklearn.metrics import accuracy_score, f1_score, hamming_loss

    random = np.random.default_rng(seed)
    gold, probabilities = random.integers(0, 2, (rows, labels)), random.random((rows, labels))
    predicted = multilabel.predicted_matrix(probabilities, threshold)
    assert (predicted == (probabilities >= threshold)).all()
    scores = multilabel.multilabel_scores(gold, predicted)
    assert scores == pytest.approx({
        "micro_f1": f1_score(gold, predicted, average="micro", zero_division=0),
        "macro_f1": f1_score(gold, predicted, average="macro", zero_division=0),
        "samples_f1": f1_score(gold, predicted, average="samples", zero_division=0),
        "subset_accuracy": accuracy_score(gold, predicted), "hamming_loss": hamming_loss(gold, predicted)})


def test_training_saves_a_multi_label_head_and_its_card(trained: tuple[Path, Path]) -> None:
    from huggingface_hub import ModelCard

    folder, _data = trained
    config = json.loads((folder / "config.json").read_text())
    assert config["problem_type"] == "multi_label_classification"
    assert sorted(config["id2label"].values()) == ["animal", "neg", "pos"]
    metrics = json.loads((folder / "metrics.json").read_text())
    assert set(multilabel.METRIC_NAMES) <= {k.removeprefix("eval_") for k in metrics}
    card = ModelCard.load(folder / "README.md")
    assert card.data.pipeline_tag == "text-classification" and card.data.datasets == ["ml.csv"]
    assert card.data.labels == ["animal", "neg", "pos"] and "micro_f1" in card.data.metrics
    assert "multi-label" in card.data.tags and "## Label distribution" in card.text


@pytest.mark.parametrize("threshold", [0.5, 0.3])
def test_evaluate_metrics_equal_sklearn_on_the_binarized_matrix(trained: tuple[Path, Path], threshold: float) -> None:
    from sklearn.metrics import accuracy_score, f1_score, hamming_loss, precision_recall_fscore_support
    from sklearn.preprocessing import MultiLabelBinarizer

    from bertstudio.core.evaluate.evaluation import EvalRequest, evaluate_job
    from bertstudio.core.evaluate.predict import EvalOptions
    from bertstudio.core.models import LoadRequest
    from bertstudio.core.progress import TaskControl

    folder, data = trained
    result = evaluate_job(LoadRequest(str(folder), "classification"),
                          EvalRequest(str(data), options=EvalOptions(threshold=threshold)), TaskControl())
    classes = list(result.classes)
    gold_sets = [set(line.split(",")[1].split("|")) - {""} for line in data.read_text().splitlines()[1:]]
    gold = MultiLabelBinarizer(classes=classes).fit_transform(gold_sets)
    predicted = (result.probabilities >= threshold).astype(int)
    assert result.metrics == pytest.approx({
        "micro_f1": f1_score(gold, predicted, average="micro", zero_division=0),
        "macro_f1": f1_score(gold, predicted, average="macro", zero_division=0),
        "samples_f1": f1_score(gold, predicted, average="samples", zero_division=0),
        "subset_accuracy": accuracy_score(gold, predicted), "hamming_loss": hamming_loss(gold, predicted)})
    precision, recall, f1, support = precision_recall_fscore_support(gold, predicted, zero_division=0)
    for i, label in enumerate(classes):
        scores = result.per_label[label]
        assert (scores.precision, scores.recall, scores.f1, scores.support) == pytest.approx(
            (precision[i], recall[i], f1[i], support[i]))
    # the probabilities are independent sigmoids, not a softmax over the labels
    assert not np.allclose(result.probabilities.sum(axis=1), 1.0)
    assert sum(r.correct for r in result.rows) == accuracy_score(gold, predicted) * len(gold)


def test_curves_and_per_label_thresholds_read_label_sets(trained: tuple[Path, Path]) -> None:
    from bertstudio.core.evaluate.curves import class_curves, threshold_table
    from bertstudio.core.evaluate.evaluation import EvalRequest, evaluate_job
    from bertstudio.core.models import LoadRequest
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.classification.evaluate_multilabel import at_thresholds

    folder, data = trained
    result = evaluate_job(LoadRequest(str(folder), "classification"), EvalRequest(str(data)), TaskControl())
    animal = class_curves(result.probabilities, result.classes, result.golds, "animal")
    assert animal.positives == sum("animal" in g for g in result.golds) == 20
    table = threshold_table(result.probabilities, result.classes, result.golds, "animal").at(0.5)
    assert table.tp + table.fn == 20
    # every label at 0.5 is the evaluation itself; per-label thresholds change only their own column
    assert at_thresholds(result.probabilities, result.classes, result.golds, 0.5) == pytest.approx(result.metrics)
    lowered = at_thresholds(result.probabilities, result.classes, result.golds, [0.0, 0.5, 0.5])
    assert lowered["hamming_loss"] != result.metrics["hamming_loss"] or table.tn == 0


def test_evaluate_cli_reports_the_metrics_under_metrics(trained: tuple[Path, Path], capfd) -> None:  # noqa: ANN001
    folder, data = trained
    done = run_cli(capfd, "evaluate", "--model", str(folder), "--data", str(data), "--threshold", "0.4", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report["metrics"]) == set(multilabel.METRIC_NAMES)
    assert set(report["per_class"]) == {"animal", "neg", "pos"} and "threshold" not in report


def _one_error_line(done: object) -> str:
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]  # type: ignore[attr-defined]
    assert done.returncode == 1 and len(lines) == 1 and "Traceback" not in done.stderr  # type: ignore[attr-defined]
    return lines[0]


def test_bad_input_is_one_clear_line(tmp_path: Path, capfd, checkpoint_factory) -> None:  # noqa: ANN001
    model = str(checkpoint_factory("bert", "Model"))
    data = multilabel_csv(tmp_path / "ml.csv", 32)
    base = ["train", "--task", "classify", "--model", model, "--output", str(tmp_path / "out"), "--max-steps", "1"]
    assert "add --multi-label" in _one_error_line(run_cli(capfd, *base, "--train", str(data)))
    once = tmp_path / "once.csv"
    once.write_text("text,label\na,x\nb,x\nc,y|x\nd,z\n", encoding="utf-8")
    line = _one_error_line(run_cli(capfd, *base, "--train", str(once), "--multi-label"))
    assert "'y', 'z' appear on only one row" in line
    single = tmp_path / "single.csv"
    single.write_text("text,label\na,x\nb,x\nc,y\n", encoding="utf-8")
    line = _one_error_line(run_cli(capfd, *base, "--train", str(single), "--class-weights", "balanced"))
    assert "'y' appear on only one row" in line
    line = _one_error_line(run_cli(capfd, *base, "--train", str(data), "--multi-label", "--early-stopping", "2",
                                   "--eval-share", "0"))
    assert "Early stopping needs validation data" in line
    line = _one_error_line(run_cli(capfd, *base, "--train", str(data), "--loss", "focal", "--focal-gamma", "-1"))
    assert "--focal-gamma" in line and ">= 0" in line
    line = _one_error_line(run_cli(capfd, *base[:2], "ner", *base[3:], "--train", str(data), "--class-weights",
                                   "balanced"))
    assert "--class-weights balanced goes with text classification" in line
    assert not (tmp_path / "out").exists()


def test_classify_shows_independent_sigmoid_probabilities(trained: tuple[Path, Path], capfd) -> None:  # noqa: ANN001
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    folder, _data = trained
    done = run_cli(capfd, "classify", "--model", str(folder), "the dog is good", "--json")
    assert done.returncode == 0, done.stderr
    shown = {item["label"]: item["score"] for item in json.loads(done.stdout)}
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    with torch.no_grad():
        logits = model(**AutoTokenizer.from_pretrained(folder)("the dog is good", return_tensors="pt")).logits[0]
    expected = {model.config.id2label[i]: float(p) for i, p in enumerate(logits.sigmoid())}
    assert shown == pytest.approx(expected, abs=1e-5)
