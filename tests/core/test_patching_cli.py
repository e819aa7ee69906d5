"""bertstudio patch: the CLI contract of issue 30 (JSON shape, inputs in each task's shape, clear errors)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli


def _json(capfd, *args: str) -> dict:  # noqa: ANN001
    done = run_cli(capfd, "patch", *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_patch_json_has_the_contract_fields(checkpoint_factory, capfd) -> None:  # noqa: ANN001
    model = str(checkpoint_factory("bert", "SequenceClassification"))
    found = _json(capfd, "--model", model, "--task", "classify", "a good film .", "--corrupted", "a bad film .")
    tokens = ["[CLS]", "a", "good", "film", ".", "[SEP]"]
    assert found["clean_tokens"] == tokens and found["corrupted_tokens"] == ["[CLS]", "a", "bad", "film", ".", "[SEP]"]
    assert found["target"] in ("negative", "positive") and found["differing"] == [2]
    assert isinstance(found["clean_score"], float) and isinstance(found["corrupted_score"], float)
    assert len(found["states"]) == 3 and all(len(row) == len(tokens) for row in found["states"])  # layers + 1
    assert len(found["heads"]) == 2 and all(len(row) == 2 for row in found["heads"]) and len(found["layers"]) == 2
    # copying the edited token's embedding back gives the clean input itself
    assert found["states"][0][2] == pytest.approx(found["clean_score"], abs=1e-5)
    other = _json(capfd, "--model", model, "--task", "classify", "a good film .", "--corrupted", "a bad film .",
                  "--target", "negative" if found["target"] == "positive" else "positive")
    assert other["clean_score"] == pytest.approx(1 - found["clean_score"], abs=1e-5)


def test_patch_takes_each_task_shape(checkpoint_factory, capfd) -> None:  # noqa: ANN001
    qa = str(checkpoint_factory("bert", "QuestionAnswering"))
    found = _json(capfd, "--model", qa, "--task", "qa", "where does john live ?", "john lives in paris .",
                  "--corrupted", "where does john live ?", "john lives in berlin .", "--target", "end")
    assert found["target"] == "end" and found["states"] is not None
    flagged = _json(capfd, "--model", qa, "--task", "qa", "--question", "where does john live ?", "--context",
                    "john lives in paris .", "--corrupted", "where does john live ?", "john lives in berlin .",
                    "--target", "end")
    assert flagged["states"] == found["states"]
    attribution = _json(capfd, "--model", qa, "--task", "qa", "where does john live ?", "john lives in paris .",
                        "--corrupted", "where does john live ?", "john lives in berlin .",
                        "--method", "attribution", "--sample", "8")
    assert attribution["method"] == "attribution" and attribution["agreement"]["cells"] == 8


def test_patch_text_output_and_noise(checkpoint_factory, capfd) -> None:  # noqa: ANN001
    model = str(checkpoint_factory("bert", "SequenceClassification"))
    done = run_cli(capfd, "patch", "--model", model, "--task", "classify", "a good film .", "--noise", "2",
                   "--seed", "5")
    assert done.returncode == 0, done.stderr
    assert "states (rows: positions" in done.stdout and "*   2 good" in done.stdout and "heads (rows" in done.stdout
    noised = _json(capfd, "--model", model, "--task", "classify", "a good film .", "--noise", "2", "--seed", "5")
    assert noised["corruption"] == "noise" and noised["corrupted_tokens"] == noised["clean_tokens"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["a good film ."], "Give the corrupted input after --corrupted"),
        (["a good film .", "--corrupted", "a", "b", "c"], "--corrupted: classify takes a text"),
        (["a good film .", "--corrupted", "a bad film .", "--noise", "1"], "either --corrupted or --noise"),
        (["a good film .", "--noise", "x"], "--noise position must be a whole number"),
        (["a good film .", "--noise", "40"], "Token 40 does not exist"),
        (["a good film .", "--corrupted", "a bad film .", "--target", "neutral"], "Unknown label"),
        (["a good film .", "--corrupted", "a bad film .", "--sample", "2"], "--sample must be"),
    ],
)
def test_patch_errors_are_one_clear_message(checkpoint_factory, capfd, args: list[str], message: str) -> None:  # noqa: ANN001
    model = str(checkpoint_factory("bert", "SequenceClassification"))
    done = run_cli(capfd, "patch", "--model", model, "--task", "classify", *args)
    assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_patch_length_mismatch_message(checkpoint_factory, capfd) -> None:  # noqa: ANN001
    mask = str(checkpoint_factory("bert", "MaskedLM"))
    done = run_cli(capfd, "patch", "--model", mask, "--task", "fill-mask", "the cat sat on the [MASK] .",
                   "--corrupted", "the big cat sat on the [MASK] .")
    assert done.returncode == 1 and "different token lengths (9 vs 10)" in done.stderr, done.stderr
    classify = str(checkpoint_factory("bert", "SequenceClassification"))
    found = _json(capfd, "--model", classify, "--task", "classify", "a good film .", "--corrupted",
                  "a very bad film .")
    assert found["states"] is None and found["same_length"] is False
    assert "position by position is undefined" in found["notes"][0]["text"]
