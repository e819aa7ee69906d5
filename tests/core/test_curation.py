"""Issue 41 items 4, 6, 7 (pure parts): folds stratified and seeded (single- and multi-label), label
issues equal to cleanlab's on the same probabilities, the OOF file checked against its data, the
uncertainty strategies, and the corrected/labelled copies that never replace the user's file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bertstudio.core.curation import copies, label_issues, oof
from bertstudio.core.curation.active_learning import most_uncertain, uncertainty
from bertstudio.core.curation.stratify import check_folds, iterative_folds, stratified_folds
from bertstudio.core.errors import InputError


# -- folds -----------------------------------------------------------------------------------------
def test_single_label_folds_are_stratified_seeded_and_sklearns() -> None:
    from sklearn.model_selection import StratifiedKFold

    labels = ["a"] * 30 + ["b"] * 12 + ["c"] * 6
    folds = stratified_folds(labels, 3, seed=7)
    for fold in range(3):
        held = [labels[i] for i in np.flatnonzero(folds == fold)]
        assert (held.count("a"), held.count("b"), held.count("c")) == (10, 4, 2)
    assert np.array_equal(folds, stratified_folds(labels, 3, seed=7))
    assert not np.array_equal(folds, stratified_folds(labels, 3, seed=8))
    splitter = StratifiedKFold(n_splits=3, shuffle=True, random_state=7)
    for fold, (_train, held_rows) in enumerate(splitter.split(np.zeros(len(labels)), labels)):
        assert set(np.flatnonzero(folds == fold)) == set(held_rows)


@pytest.mark.parametrize(("k", "said"), [(1, "2 folds or more, not 1"), (0, "2 folds or more"),
                                         (4, "4 folds need at least 4 rows of every class, but 'b' has 3")])
def test_impossible_fold_counts_are_one_clear_line(k: int, said: str) -> None:
    with pytest.raises(InputError, match=said) as caught:
        check_folds(k, ["a"] * 9 + ["b"] * 3)
    assert "\n" not in caught.value.message


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**16), st.integers(2, 5), st.integers(12, 80), st.integers(1, 6))
def test_iterative_stratification_deals_every_row_and_keeps_label_shares(seed: int, k: int, rows: int,
                                                                          labels: int) -> None:
    rng = np.random.default_rng(seed)
    matrix = rng.random((rows, labels)) < rng.uniform(0.1, 0.6, size=labels)
    folds = iterative_folds(matrix, k, seed)
    assert folds.min() >= 0 and folds.max() < k and len(folds) == rows
    assert np.array_equal(folds, iterative_folds(matrix, k, seed))  # seeded
    sizes = np.bincount(folds, minlength=k)
    assert sizes.max() - sizes.min() <= max(2, labels)  # rows spread evenly
    counts = matrix.sum(axis=0)
    for label in range(labels):
        per_fold = np.bincount(folds[matrix[:, label]], minlength=k)
        assert per_fold.max() - per_fold.min() <= max(2, -(-counts[label] // k)), (label, per_fold)
    present = np.flatnonzero(counts)
    rarest = present[counts[present] == counts[present].min()] if len(present) else present
    if len(rarest) == 1:  # dealt first, so spread exactly: no fold more than one row from another
        per_fold = np.bincount(folds[matrix[:, rarest[0]]], minlength=k)
        assert per_fold.max() - per_fold.min() <= 1, per_fold


def test_iterative_stratification_beats_chance_on_rare_labels() -> None:
    """Sechidis et al.'s point: a rare label lands in every fold, where a plain shuffle may miss folds."""
    matrix = np.zeros((60, 3), dtype=bool)
    matrix[:40, 0] = True
    matrix[40:, 1] = True
    matrix[[3, 17, 45, 52, 58], 2] = True  # rare: five rows over five folds
    folds = iterative_folds(matrix, 5, seed=0)
    assert sorted(folds[matrix[:, 2]]) == [0, 1, 2, 3, 4]


def test_multi_label_cells_are_folded_by_iterative_stratification() -> None:
    from bertstudio.core.curation.crossval import class_names, multi_label_metrics
    from bertstudio.core.curation.stratify import fold_assignments, label_matrix

    cells = ["sports|finance", "sports", "", "tech", "finance|tech", "sports", "tech", "finance"] * 3
    classes = class_names(tuple(cells), multi_label=True)
    assert classes == ("finance", "sports", "tech")
    matrix = label_matrix([[n for n in c.split("|") if n] for c in cells], classes)
    assert np.array_equal(fold_assignments(cells, 3, 5, multi_label=True), iterative_folds(matrix, 3, 5))
    probs = np.where(matrix, 0.9, 0.1)
    probs[0] = [0.2, 0.9, 0.1]  # one row misses finance
    metrics = multi_label_metrics(cells, probs, classes)
    assert metrics["subset_accuracy"] == pytest.approx(23 / 24) and 0.9 < metrics["micro_f1"] < 1.0


# -- label issues ---------------------------------------------------------------------------------
def _noisy(seed: int, rows: int = 120, classes: int = 3) -> tuple[list[str], np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    names = [f"c{j}" for j in range(classes)]
    truth = rng.integers(0, classes, rows)
    probs = rng.dirichlet(np.ones(classes) * 0.5, rows)
    probs[np.arange(rows), truth] += 1.5
    probs /= probs.sum(axis=1, keepdims=True)
    given = truth.copy()
    flipped = rng.choice(rows, rows // 10, replace=False)
    given[flipped] = (given[flipped] + 1) % classes
    return [names[g] for g in given], probs, names


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_label_issues_equal_cleanlabs(seed: int) -> None:
    from cleanlab.filter import find_label_issues

    given, probs, names = _noisy(seed)
    found = label_issues.find_issues(given, probs, names)
    labels = np.asarray([names.index(g) for g in given])
    expected = find_label_issues(labels, probs, return_indices_ranked_by="self_confidence")
    assert [issue.row for issue in found] == [int(i) for i in expected] and len(found) > 5
    for issue in found:
        assert issue.suggested == names[int(probs[issue.row].argmax())]
        assert issue.self_confidence == pytest.approx(probs[issue.row, names.index(issue.given)])


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # cleanlab 2.9 on its own multi_label argument
def test_multi_label_issues_equal_cleanlabs() -> None:
    from cleanlab.filter import find_label_issues

    rng = np.random.default_rng(3)
    names = ["finance", "sports", "tech"]
    truth = rng.random((150, 3)) < 0.35
    probs = np.clip(np.where(truth, 0.8, 0.15) + rng.normal(0, 0.08, truth.shape), 0.01, 0.99)
    given = truth.copy()
    given[:12, 0] = ~given[:12, 0]
    cells = ["|".join(n for n, on in zip(names, row, strict=True) if on) for row in given]
    found = label_issues.find_issues(cells, probs, names, multi_label=True)
    lists = [list(np.flatnonzero(row)) for row in given]
    expected = find_label_issues(lists, probs, multi_label=True, return_indices_ranked_by="self_confidence")
    assert [issue.row for issue in found] == [int(i) for i in expected] and found


def _files(tmp_path: Path) -> tuple[Path, Path, list[str], np.ndarray]:
    given, probs, names = _noisy(5, rows=60)
    data = tmp_path / "data.csv"
    data.write_text("text,label\n" + "".join(f"text {i},{g}\n" for i, g in enumerate(given)), encoding="utf-8")
    path = tmp_path / "oof.csv"
    oof.write_oof(path, given, names, probs)
    return data, path, given, probs


def test_issues_from_files_match_the_arrays_and_the_cli_json(tmp_path: Path, capfd) -> None:  # noqa: ANN001
    import json

    from tests.conftest import run_cli

    data, path, given, probs = _files(tmp_path)
    found, read = label_issues.issues_in_files(data, path)
    assert read.given == tuple(given) and np.allclose(read.probabilities, probs, atol=1e-6)
    assert [i.row for i in found] == [i.row for i in label_issues.find_issues(given, probs, list(read.classes))]
    done = run_cli(capfd, "label-issues", "--data", str(data), "--probabilities", str(path), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"issues": [i.to_json() for i in found]}


@pytest.mark.parametrize(("change", "said"), [
    (lambda lines: lines[:-3], "has 57 rows but data.csv has 60"),
    (lambda lines: [lines[0], lines[1].replace(",c", ",x", 1), *lines[2:]], "Row 0 is labelled"),
    (lambda lines: [lines[0], lines[2], *lines[2:]], "row 1 appears twice"),
    (lambda lines: [lines[0], lines[1].rsplit(",", 1)[0] + ",1.5", *lines[2:]], "not a probability"),
    (lambda lines: ["index,label,a,b", *lines[1:]], "not an out-of-fold probabilities file"),
])
def test_an_oof_file_that_does_not_match_is_one_clear_line(tmp_path: Path, capfd, change, said) -> None:  # noqa: ANN001
    from tests.conftest import run_cli

    data, path, _given, _probs = _files(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(change(lines)) + "\n", encoding="utf-8")
    done = run_cli(capfd, "label-issues", "--data", str(data), "--probabilities", str(path))
    assert done.returncode == 1 and done.stderr.startswith("error: ") and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


# -- uncertainty ------------------------------------------------------------------------------------
def test_each_strategy_is_its_formula() -> None:
    probs = np.asarray([[0.5, 0.3, 0.2], [0.9, 0.05, 0.05], [0.34, 0.33, 0.33], [0.6, 0.4, 0.0]])
    for row, p in enumerate(probs):
        top = sorted(p, reverse=True)
        assert uncertainty(probs, "entropy")[row] == pytest.approx(-sum(x * np.log(x) for x in p if x > 0))
        assert uncertainty(probs, "margin")[row] == pytest.approx(1 - (top[0] - top[1]))
        assert uncertainty(probs, "least-confidence")[row] == pytest.approx(1 - top[0])
    assert list(most_uncertain(uncertainty(probs, "least-confidence"), 2)) == [2, 0]
    assert list(most_uncertain(np.asarray([0.5, 0.7, 0.5, 0.7]), 3)) == [1, 3, 0]  # ties: pool order
    with pytest.raises(InputError, match="Unknown strategy"):
        uncertainty(probs, "random")


# -- copies ---------------------------------------------------------------------------------------
def test_corrected_and_labelled_copies_never_replace_a_file(tmp_path: Path) -> None:
    source = tmp_path / "reviews.csv"
    original = "text,label,source\ngood film,positive,a\nbad film,positive,b\nfine,negative,c\n"
    source.write_text(original, encoding="utf-8")
    first = copies.corrected_copy(source, "label", {1: "negative"}, drop=[2])
    assert first.name == "reviews-corrected.csv"
    assert first.read_text(encoding="utf-8").splitlines() == ["text,label,source", "good film,positive,a",
                                                              "bad film,negative,b"]
    second = copies.corrected_copy(source, "label", {}, drop=[0])
    assert second.name == "reviews-corrected-2.csv" and first.read_text(encoding="utf-8").count("\n") == 3
    added = copies.appended_copy(source, "text", "label", [("new text", "positive")])
    assert added.name == "reviews-labelled.csv" and added.read_text(encoding="utf-8").endswith("new text,positive,\n")
    assert source.read_text(encoding="utf-8") == original
    with pytest.raises(InputError, match="Row 7 is not in reviews.csv"):
        copies.corrected_copy(source, "label", {7: "negative"})
