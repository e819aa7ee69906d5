"""`bertstudio runs [--json]`: the runs a `train` recorded, newest first; bad input is one line, exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bertstudio.core.runs import index
from tests.conftest import run_cli
from tests.core.test_training import toy_csv


def test_a_trained_run_is_listed(tmp_path: Path, checkpoint_factory, capfd, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv(index.RUNS_DIR_ENV, str(tmp_path / "index"))
    output = tmp_path / "model"
    trained = run_cli(capfd, "train", "--model", str(checkpoint_factory("bert", "Model")), "--task", "classify",
                      "--train", str(toy_csv(tmp_path / "toy.csv", 24)), "--output", str(output), "--max-steps", "2",
                      "--batch-size", "8", "--max-length", "16", "--eval-share", "0.25", "--json")
    assert trained.returncode == 0, trained.stderr
    listed = run_cli(capfd, "runs", "--json")
    assert listed.returncode == 0 and listed.stderr == ""
    (run,) = json.loads(listed.stdout)
    assert run["status"] == "finished" and run["output_dir"] == str(output.resolve()) and "curves" not in run
    assert run["config"]["max_steps"] == 2 and run["data"].startswith("sha256 ") and "eval_accuracy" in run["metrics"]
    shown = run_cli(capfd, "runs")
    assert shown.returncode == 0 and run["id"] in shown.stdout and "eval accuracy" in shown.stdout


def test_runs_from_a_chosen_folder_newest_first_failed_ones_say_why(tmp_path: Path, capfd) -> None:  # noqa: ANN001
    folder = tmp_path / "elsewhere"
    common = dict(task="token-classification", started="2026-11-26T10:00:00", duration_seconds=75.0, device="cpu",
                  output_dir="/out", model="m", data="")
    index.write_record(index.RunRecord(id="20261126-100000-aaaa0001", status="failed",
                                       error="The training file has no rows.", **common), folder)
    index.write_record(index.RunRecord(id="20261126-110000-aaaa0002", status="finished", step=3, max_steps=3,
                                       metrics={"eval_f1": 0.5}, **common), folder)
    shown = run_cli(capfd, "runs", "--runs-dir", str(folder))
    first, second = shown.stdout.splitlines()
    assert first.startswith("20261126-110000-aaaa0002") and "eval f1 0.5000" in first and "1m15s" in first
    assert second.startswith("20261126-100000-aaaa0001") and "The training file has no rows." in second


@pytest.mark.parametrize("make", ["missing", "file"])
def test_a_runs_folder_that_is_not_one_is_one_line(tmp_path: Path, capfd, make: str) -> None:  # noqa: ANN001
    path = tmp_path / "not-there"
    if make == "file":
        path.write_text("x", encoding="utf-8")
    result = run_cli(capfd, "runs", "--runs-dir", str(path))
    assert result.returncode == 1 and result.stderr.startswith("error: The runs folder")
    assert "Traceback" not in result.stderr


def test_no_runs_yet_says_so_and_json_is_an_empty_list(tmp_path: Path, capfd, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv(index.RUNS_DIR_ENV, str(tmp_path / "never-written"))
    assert json.loads(run_cli(capfd, "runs", "--json").stdout) == []
    empty = run_cli(capfd, "runs")
    assert empty.returncode == 0 and "No training runs recorded" in empty.stderr
