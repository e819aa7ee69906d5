"""Issue 40, `check` borders: --failures never replaces a file unasked (nor the suite itself) and is
checked before the suite runs (a missing folder too); a head never trained for the suite's task is a
warning, for model B too; model B's errors are named as B's; --mask-top-k is blamed on itself;
duplicate keys in a suite are refused; NER failures keep their train/measure halves (test_suites_fix_tasks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

CLASSIFY = {"task": "classify", "tests": [{"name": "t", "type": "MFT", "inputs": ["good day", "bad night"],
                                           "expect": "positive"}]}
NER = {"task": "ner", "tests": [{"name": "t", "type": "MFT", "inputs": ["John lives in Paris"],
                                 "expect": ["B-PER", "O", "O", "B-LOC"]}]}


def _suite(tmp_path: Path, data: dict, name: str = "suite.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def classifier(checkpoint_factory) -> str:  # noqa: ANN001
    return str(checkpoint_factory("bert", "SequenceClassification"))


def test_failures_never_replace_an_existing_file_unasked(tmp_path: Path, classifier: str, capfd) -> None:  # noqa: ANN001
    suite = _suite(tmp_path, CLASSIFY)
    data = tmp_path / "train.csv"
    data.write_text("text,label\nkeep me,positive\n", encoding="utf-8")
    done = run_cli(capfd, "check", "--model", "no-such-model-folder", "--suite", str(suite), "--failures", str(data))
    assert done.returncode == 1 and "already exists" in done.stderr and "--overwrite" in done.stderr, done.stderr
    assert data.read_text(encoding="utf-8") == "text,label\nkeep me,positive\n"
    done = run_cli(capfd, "check", "--model", classifier, "--suite", str(suite), "--failures", str(data),
                   "--overwrite")
    assert done.returncode == 0, done.stderr
    assert data.read_text(encoding="utf-8").startswith("text,label,test,type,split")


def test_failures_are_never_the_suite_itself(tmp_path: Path, capfd) -> None:  # noqa: ANN001
    suite = _suite(tmp_path, CLASSIFY)
    before = suite.read_bytes()
    done = run_cli(capfd, "check", "--model", "no-such-model-folder", "--suite", str(suite), "--failures", str(suite),
                   "--overwrite")
    assert done.returncode == 1 and "the suite file itself" in done.stderr, done.stderr
    assert suite.read_bytes() == before


def test_a_failures_path_in_a_missing_folder_is_refused_before_the_suite_runs(tmp_path: Path, capfd) -> None:  # noqa: ANN001
    done = run_cli(capfd, "check", "--model", "no-such-model-folder", "--suite", str(_suite(tmp_path, CLASSIFY)),
                   "--failures", str(tmp_path / "missing" / "out.csv"))
    assert done.returncode == 1 and "does not exist" in done.stderr and "missing" in done.stderr, done.stderr
    assert "no-such-model-folder" not in done.stderr  # refused before any model loads


def test_failures_into_the_installed_package_are_refused(tmp_path: Path, capfd) -> None:  # noqa: ANN001
    import bertstudio

    inside = Path(bertstudio.__file__).parent / "failures-here.csv"
    done = run_cli(capfd, "check", "--model", "no-such-model-folder", "--suite", str(_suite(tmp_path, CLASSIFY)),
                   "--failures", str(inside))
    assert done.returncode == 1 and "BERT Studio's own folder" in done.stderr, done.stderr
    assert not inside.exists()


def test_an_ner_suite_on_a_classifier_warns_for_a_and_b(tmp_path: Path, classifier: str, capfd) -> None:  # noqa: ANN001
    done = run_cli(capfd, "check", "--model", classifier, "--suite", str(_suite(tmp_path, NER)),
                   "--compare", classifier, "--json")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 2 and "no trained ner head" in warnings[0], done.stderr
    assert warnings[1].startswith("warning: B: ")
    report = json.loads(done.stdout)
    assert "no trained ner head" in report["warnings"][0] and report["compare"]["warnings"]


def test_errors_of_the_compared_model_are_named_as_model_b(tmp_path: Path, classifier: str, capfd) -> None:  # noqa: ANN001
    done = run_cli(capfd, "check", "--model", classifier, "--suite", str(_suite(tmp_path, CLASSIFY)),
                   "--compare", str(tmp_path / "no-such-model"))
    assert done.returncode == 1 and done.stderr.startswith("error: Model B ("), done.stderr


def test_mask_top_k_is_blamed_on_the_option_not_the_suite(tmp_path: Path, capfd) -> None:  # noqa: ANN001
    done = run_cli(capfd, "check", "--model", "no-such-model-folder", "--suite", str(_suite(tmp_path, CLASSIFY)),
                   "--mask-top-k", "-3")
    assert done.returncode == 1 and "--mask-top-k is -3" in done.stderr and "suite" not in done.stderr, done.stderr


def test_duplicate_keys_in_a_suite_are_refused(tmp_path: Path, capfd) -> None:  # noqa: ANN001
    suite = tmp_path / "dup.json"
    suite.write_text('{"task": "classify", "task": "ner", "tests": []}', encoding="utf-8")
    done = run_cli(capfd, "check", "--model", "no-such-model-folder", "--suite", str(suite))
    assert done.returncode == 1 and "the key 'task' twice" in done.stderr, done.stderr


def test_evaluate_names_errors_of_the_compared_model_as_model_b(tmp_path: Path, classifier: str, capfd) -> None:  # noqa: ANN001
    from tests.core.test_cka_report import DATA

    done = run_cli(capfd, "evaluate", "--model", classifier, "--data", str(DATA), "--limit", "4",
                   "--compare", str(tmp_path / "no-such-model"))
    assert done.returncode == 1 and done.stderr.startswith("error: Model B ("), done.stderr
