"""bertstudio export (issue 33): the file, the validation's largest difference, JSON, clear refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli


def test_export_prints_the_largest_difference(checkpoint_factory, capfd: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    out = tmp_path / "ner.onnx"
    done = run_cli(capfd, "export", "--model", str(checkpoint_factory("bert", "TokenClassification")),
                   "--task", "ner", "--format", "onnx", "--output", str(out), "--no-speed")
    assert done.returncode == 0, done.stderr
    assert out.is_file()
    assert "Largest difference onnxruntime vs PyTorch" in done.stdout


def test_export_json(checkpoint_factory, capfd: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "clf.onnx"
    done = run_cli(capfd, "export", "--model", str(checkpoint_factory("distilbert", "SequenceClassification")),
                   "--task", "classify", "--output", str(out), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["path"] == str(out) and data["max_difference"] <= 1e-4
    assert data["inputs"] == ["input_ids", "attention_mask"] and data["outputs"] == ["logits"]
    assert [s["runtime"] for s in data["speeds"]] == ["onnxruntime", "pytorch", "pytorch int8"]


@pytest.mark.parametrize(("args", "message"), [
    (["--task", "qa", "--output", "{tmp}/x.txt"], "does not end in .onnx"),
    (["--task", "qa", "--output", "{tmp}/no/x.onnx"], "does not exist"),
    (["--task", "pretraining", "--output", "{tmp}/x.onnx"], "invalid choice"),
])
def test_bad_input_is_one_clear_line(args: list[str], message: str, checkpoint_factory,
                                     capfd: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = str(checkpoint_factory("bert", "QuestionAnswering"))
    argv = ["export", "--model", folder, *[a.format(tmp=tmp_path) for a in args]]
    try:
        done = run_cli(capfd, *argv)
        code, err = done.returncode, done.stderr
    except SystemExit as exit_:  # argparse's own refusal of a bad choice
        code, err = int(exit_.code or 0), capfd.readouterr().err
    assert code in (1, 2) and message in err
    assert "Traceback" not in err
    assert not list(tmp_path.glob("*.onnx*"))
