"""Issue 40, search borders: a search locks its output folder (a second one, even with --overwrite, is
refused and the first one's trials stay); an unknown metric is refused before the first trial, one the
task does not report at the first evaluation; `--search 0` and a NaN in the space are refused in their
own words; duplicate keys in a space file are refused; Ctrl+C before any trial finished says stopped."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bertstudio.core.outputs import folder_lock
from bertstudio.core.training import saving
from tests.cli.test_train_search import _args
from tests.conftest import run_cli


def test_a_second_search_into_a_locked_folder_is_refused_and_keeps_the_first_ones_trials(
        tmp_path: Path, checkpoint_factory, capfd) -> None:  # noqa: ANN001
    out = tmp_path / "out"
    saving.write_marker(out, "search", "classification")
    trial = out / "trials" / "trial-00"
    saving.write_marker(trial, "run", "classification")
    with folder_lock(out.resolve(), "search"):  # the first search, still running
        done = run_cli(capfd, *_args(tmp_path, checkpoint_factory, "--search", "2", "--overwrite"))
    assert done.returncode == 1 and "Another run is writing to" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.startswith("error: ") and done.stderr.count("error") == 1
    assert trial.is_dir() and saving.is_ours(trial)


def test_an_unknown_metric_is_refused_before_the_first_trial(tmp_path: Path, checkpoint_factory, capfd) -> None:  # noqa: ANN001
    started = time.monotonic()
    done = run_cli(capfd, *_args(tmp_path, checkpoint_factory, "--search", "3", "--search-metric", "acuracy"))
    assert done.returncode == 1 and "'acuracy' is not a validation metric" in done.stderr, done.stderr
    assert not (tmp_path / "out").exists() and time.monotonic() - started < 5


def test_a_metric_the_task_does_not_report_stops_at_the_first_evaluation(
        tmp_path: Path, checkpoint_factory, capfd) -> None:  # noqa: ANN001
    done = run_cli(capfd, *_args(tmp_path, checkpoint_factory, "--search", "3", "--search-metric", "pearson",
                                 "--json"))
    assert done.returncode == 1 and "'pearson' is not one this task reports" in done.stderr, done.stderr
    assert "accuracy" in done.stderr
    assert not [line for line in done.stdout.splitlines() if json.loads(line).get("event") == "trial"]
    assert not list((tmp_path / "out" / "trials").glob("trial-*"))


def test_search_zero_is_refused_not_a_silent_single_run(tmp_path: Path, checkpoint_factory, capfd) -> None:  # noqa: ANN001
    done = run_cli(capfd, *_args(tmp_path, checkpoint_factory, "--search", "0"))
    assert done.returncode == 1 and "1 or more, not 0" in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()
    done = run_cli(capfd, *_args(tmp_path, checkpoint_factory, "--search", "5000"))  # every count has a bound
    assert done.returncode == 1 and "at most 1,000 trials" in done.stderr, done.stderr


@pytest.mark.parametrize(("text", "words"), [
    ('{"learning_rate": {"low": NaN, "high": 1e-3}}', "learning_rate's \"low\" must be a finite number"),
    ('{"learning_rate": {"low": 1e-5, "high": 1e-3}, "learning_rate": {"low": 1, "high": 2}}',
     "the key 'learning_rate' twice"),
])
def test_a_bad_space_file_is_blamed_on_the_space(tmp_path: Path, checkpoint_factory, capfd, text: str,  # noqa: ANN001
                                                 words: str) -> None:
    (tmp_path / "space.json").write_text(text, encoding="utf-8")
    done = run_cli(capfd, *_args(tmp_path, checkpoint_factory, "--search", "2", "--search-space",
                                 str(tmp_path / "space.json")))
    assert done.returncode == 1 and words in done.stderr and "--lr" not in done.stderr, done.stderr


def test_ctrl_c_before_any_trial_finished_says_stopped(tmp_path: Path, checkpoint_factory, capfd,  # noqa: ANN001
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from bertstudio.core.training import search as search_module

    def stopped_search(config, trials, space, control, stop_event):  # noqa: ANN001, ANN202
        return search_module.SearchResult("", space.metric, space.direction, (), None, True, {})

    monkeypatch.setattr(search_module, "search", stopped_search)
    done = run_cli(capfd, *_args(tmp_path, checkpoint_factory, "--search", "2"))
    assert done.returncode == 130 and "stopped" in done.stderr, done.stderr
    assert "learning-rate" not in done.stderr and "error" not in done.stderr
