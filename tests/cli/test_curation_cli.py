"""Issue 41 items 4, 5, 7 end to end on tiny checkpoints: `train --cv K [--label-issues]` (folds seeded
and stratified, every row's out-of-fold probabilities, metrics scikit-learn's), `train --find-lr`
(an exponential sweep and its suggestion), `select` (each strategy equals a hand computation over
the model's own probabilities)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from bertstudio.core.curation.oof import read_oof
from bertstudio.core.curation.stratify import stratified_folds
from bertstudio.core.training.data import read_labelled
from bertstudio.core.training.find_lr import smooth, suggest, sweep
from tests.conftest import run_cli
from tests.core.test_training import toy_csv


def _train(tmp_path: Path, checkpoint_factory, *extra: str) -> list[str]:  # noqa: ANN001
    return ["train", "--model", str(checkpoint_factory("bert", "Model")), "--task", "classify",
            "--train", str(toy_csv(tmp_path / "toy.csv", 36)), "--output", str(tmp_path / "cv"),
            "--max-steps", "3", "--batch-size", "8", "--max-length", "16", "--seed", "3", *extra]


def test_cv_writes_every_rows_out_of_fold_probabilities(tmp_path: Path, checkpoint_factory, capfd) -> None:  # noqa: ANN001
    from sklearn.metrics import accuracy_score, f1_score

    done = run_cli(capfd, *_train(tmp_path, checkpoint_factory, "--cv", "3", "--label-issues", "--json"))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["fold"] for e in lines if e["event"] == "fold"] == [0, 1, 2]
    assert {e["fold"] for e in lines if e["event"] == "step"} == {1, 2, 3}  # each fold's own training events
    final = lines[-1]
    assert final["event"] == "cv" and final["k"] == 3 and set(final["mean"]) == {"accuracy", "macro_f1", "log_loss"}
    data = read_labelled(tmp_path / "toy.csv")
    found = read_oof(final["oof_file"])
    assert found.given == data.labels and found.classes == ("negative", "positive")
    assert np.allclose(found.probabilities.sum(axis=1), 1.0, atol=1e-5)
    summary = json.loads(Path(final["output_dir"], "cv.json").read_text(encoding="utf-8"))
    folds = np.asarray(summary["assignments"])
    assert np.array_equal(folds, stratified_folds(data.labels, 3, seed=3))  # seeded by --seed, stratified
    gold = np.asarray([found.classes.index(label) for label in data.labels])
    for fold in final["folds"]:
        held = folds == fold["fold"]
        predicted = found.probabilities[held].argmax(axis=1)
        assert fold["metrics"]["accuracy"] == pytest.approx(accuracy_score(gold[held], predicted))
        assert fold["metrics"]["macro_f1"] == pytest.approx(f1_score(gold[held], predicted, average="macro",
                                                                     labels=[0, 1], zero_division=0))
    values = [fold["metrics"]["accuracy"] for fold in final["folds"]]
    assert final["sd"]["accuracy"] == pytest.approx(float(np.std(values, ddof=1)))
    again = run_cli(capfd, "label-issues", "--data", str(tmp_path / "toy.csv"), "--probabilities", final["oof_file"],
                    "--json")
    assert json.loads(again.stdout)["issues"] == final["issues"]


def test_multi_label_cv_uses_iterative_folds_and_one_column_per_label(tmp_path: Path, checkpoint_factory,
                                                                        capfd) -> None:  # noqa: ANN001
    """`train --multi-label --cv K`: `a|b` cells are folded by iterative stratification (not as classes of
    their own: a combination seen once must not refuse K folds), and oof.csv has a column per label."""
    from bertstudio.core.curation.stratify import fold_assignments

    cells = ["sports|finance", "sports", "finance", "", "music|sports", "music"] * 5 + ["music|finance"]
    data = tmp_path / "multi.csv"
    data.write_text("text,label\n" + "".join(f"row {i} about {c or 'nothing'},{c}\n" for i, c in enumerate(cells)),
                    encoding="utf-8")
    done = run_cli(capfd, "train", "--model", str(checkpoint_factory("bert", "Model")), "--task", "classify",
                   "--multi-label", "--train", str(data), "--output", str(tmp_path / "cv"), "--max-steps", "2",
                   "--batch-size", "8", "--max-length", "16", "--seed", "3", "--cv", "3", "--label-issues",
                   "--json")
    assert done.returncode == 0, done.stderr
    final = json.loads(done.stdout.splitlines()[-1])
    found = read_oof(final["oof_file"])
    assert found.classes == ("finance", "music", "sports") and found.given == tuple(cells)
    summary = json.loads(Path(final["output_dir"], "cv.json").read_text(encoding="utf-8"))
    assert summary["assignments"] == fold_assignments(cells, 3, 3, multi_label=True).tolist()
    card = Path(final["output_dir"], "README.md").read_text(encoding="utf-8")  # the run's model card
    assert "Cross-validat" in card and "abel issues" in card and "multi-label" in card


@pytest.mark.parametrize(("extra", "said"), [
    (("--cv", "1"), "error: --cv takes 2 folds or more, not 1."),
    (("--cv", "19"), "error: 19 folds need at least 19 rows of every class, but 'negative' has 18."),
    (("--label-issues",), "error: --label-issues goes with --cv K"),
])
def test_impossible_cv_requests_are_one_line(tmp_path: Path, checkpoint_factory, capfd, extra, said) -> None:  # noqa: ANN001
    done = run_cli(capfd, *_train(tmp_path, checkpoint_factory, *extra))
    assert done.returncode == 1 and done.stderr.startswith(said), done.stderr
    assert not (tmp_path / "cv").exists()


def test_find_lr_sweeps_exponentially_and_suggests_a_rate(tmp_path: Path, checkpoint_factory, capfd) -> None:  # noqa: ANN001
    done = run_cli(capfd, *_train(tmp_path, checkpoint_factory, "--find-lr", "--json"))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    lrs = result["learning_rates"]
    assert lrs[0] == pytest.approx(1e-7) and len(lrs) == len(result["losses"]) == len(result["smoothed"]) >= 10
    ratios = np.asarray(lrs[1:]) / np.asarray(lrs[:-1])
    assert np.allclose(ratios, ratios[0])  # one constant factor per step
    assert all(math.isfinite(x) for x in result["losses"])
    assert result["suggested_learning_rate"] is None or lrs[0] <= result["suggested_learning_rate"] <= lrs[-1]
    assert not (tmp_path / "cv").exists()  # nothing saved


def test_suggestion_is_the_steepest_descent_of_the_smoothed_loss() -> None:
    lrs = list(sweep(40))
    logs = np.log10(lrs)
    losses = list(2.0 - 1.5 / (1 + np.exp(-(logs + 4) * 3)) + np.where(logs > -1.5, (logs + 1.5) * 10, 0))
    smoothed = smooth(losses, weight=0.0)  # no smoothing: the curve itself
    assert smoothed == pytest.approx(losses)
    steepest = lrs[int(np.argmin(np.gradient(losses, np.log(lrs))[: int(np.argmin(losses))]))]
    assert suggest(lrs, smoothed) == pytest.approx(steepest) and 1e-5 < steepest < 1e-3
    assert suggest(lrs, sorted(losses)) is None  # a loss that only rises: no suggestion


@pytest.mark.parametrize("strategy", ["entropy", "margin", "least-confidence"])
def test_select_equals_a_hand_computation(tmp_path: Path, checkpoint_factory, capfd, strategy: str) -> None:  # noqa: ANN001
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    folder = checkpoint_factory("bert", "SequenceClassification")
    texts = [f"the {noun} is {adj}" for noun in ("cat", "dog", "film") for adj in ("good", "bad", "new", "old")]
    pool = tmp_path / "pool.csv"
    pool.write_text("text\n" + "\n".join(texts) + "\n", encoding="utf-8")
    done = run_cli(capfd, "select", "--model", str(folder), "--pool", str(pool), "--count", "5",
                   "--strategy", strategy, "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    hand = []
    for text in texts:  # one row at a time, no batching
        with torch.no_grad():
            p = torch.softmax(model(**tokenizer(text, return_tensors="pt")).logits[0], -1).tolist()
        top = sorted(p, reverse=True)
        hand.append({"entropy": -sum(x * math.log(x) for x in p), "margin": 1 - (top[0] - top[1]),
                     "least-confidence": 1 - top[0]}[strategy])
    order = sorted(range(len(texts)), key=lambda i: -hand[i])
    assert [r["score"] for r in rows] == pytest.approx([hand[i] for i in order[:5]], abs=1e-5)
    assert all(r["text"] == texts[r["row"]] and r["score"] == pytest.approx(hand[r["row"]], abs=1e-5) for r in rows)


@pytest.mark.parametrize("argv", [("select", "--model", "m", "--pool=--", "--count", "1"),
                                  ("label-issues", "--data=--", "--probabilities", "p.csv")])
def test_an_option_given_a_bare_double_dash_is_one_line(capfd, argv: tuple[str, ...]) -> None:  # noqa: ANN001
    """Found by the fuzz harness: `--pool=--` reached the command as an empty list (argparse drops the
    '--'), an internal error; every command now refuses it in one line before anything runs."""
    done = run_cli(capfd, *argv)
    option = next(a for a in argv if a.endswith("=--")).split("=")[0]
    assert done.returncode == 1 and done.stderr.splitlines()[0] == (
        f"error: {option}=-- gives {option} no value: '--' ends the options."), done.stderr
    assert "internal error" not in done.stderr
