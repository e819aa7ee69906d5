"""`bertstudio train --search`: one JSON event per trial and a closing search event, the best trial's
model at --output, and bad search input as one clear line with exit 1 (no traceback)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.core.test_training import toy_csv


def _args(tmp_path: Path, checkpoint_factory, *extra: str) -> list[str]:  # noqa: ANN001
    return ["train", "--model", str(checkpoint_factory("bert", "Model")), "--task", "classify",
            "--train", str(toy_csv(tmp_path / "toy.csv", 40)), "--output", str(tmp_path / "out"),
            "--eval-share", "0.25", "--max-steps", "3", "--max-length", "16", "--seed", "5", *extra]


def test_search_json_has_one_event_per_trial(tmp_path: Path, checkpoint_factory, capfd) -> None:  # noqa: ANN001
    space = tmp_path / "space.json"
    space.write_text(json.dumps({"learning_rate": {"low": 1e-4, "high": 1e-3, "log": True},
                                 "batch_size": {"choices": [4, 8]}}), encoding="utf-8")
    done = run_cli(capfd, *_args(tmp_path, checkpoint_factory, "--search", "2", "--search-space", str(space),
                                 "--search-metric", "accuracy", "--json"))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    trials = [e for e in lines if e["event"] == "trial"]
    assert [t["number"] for t in trials] == [0, 1]
    assert all(set(t["params"]) == {"learning_rate", "batch_size"} for t in trials)
    assert any(e["event"] == "eval" and e["trial"] == 1 for e in lines)  # the trial's own events, labelled
    final = lines[-1]
    assert final["event"] == "search" and final["metric"] == "accuracy" and final["best"] is not None
    assert Path(final["output_dir"], "model.safetensors").is_file()
    assert Path(final["best"]["output_dir"]).parent == Path(final["output_dir"], "trials")


def test_search_human_output_names_the_best_trial(tmp_path: Path, checkpoint_factory, capfd) -> None:  # noqa: ANN001
    done = run_cli(capfd, *_args(tmp_path, checkpoint_factory, "--search", "1"))
    assert done.returncode == 0, done.stderr
    assert "best trial 1, loss" in done.stdout and "learning_rate:" in done.stdout
    assert "trial 1 finished" in done.stderr


def test_bad_search_input_is_one_line_and_exit_1(tmp_path: Path, checkpoint_factory, capfd) -> None:  # noqa: ANN001
    (tmp_path / "space.json").write_text('{"dropout": {"low": 0, "high": 1}}', encoding="utf-8")
    for extra, words in ((("--search", "2", "--search-space", str(tmp_path / "space.json")), "cannot be searched"),
                         (("--search", "-1"), "1 or more"),
                         (("--search", "2", "--eval-share", "0"), "validation data")):
        done = run_cli(capfd, *_args(tmp_path, checkpoint_factory, *extra))
        assert done.returncode == 1 and words in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
