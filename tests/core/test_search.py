"""Hyperparameter search: seeded trials repeat their settings, each finished trial is a loadable run,
the best trial's model lands at the output, a stop keeps what finished, a pruned trial leaves nothing,
and a bad space file is one clear InputError."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.progress import TaskControl
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.search import TrialProgress, TrialRecord, search, study_for
from bertstudio.core.training.search_space import SearchSpace, default_space, parse_space, read_space
from tests.core.test_training import toy_csv

SPACE = {"learning_rate": {"low": 1e-4, "high": 3e-3, "log": True}, "batch_size": {"choices": [4, 8]},
         "metric": "accuracy"}


@pytest.fixture
def base(tmp_path: Path, checkpoint_factory) -> TrainConfig:  # noqa: ANN001
    return TrainConfig(
        task="text-classification", model=str(checkpoint_factory("bert", "Model")),
        train_file=str(toy_csv(tmp_path / "toy.csv", 40)), output_dir=str(tmp_path / "out"), eval_share=0.25,
        max_steps=4, batch_size=8, max_length=16, seed=3,
    )


def _params(space: SearchSpace, seed: int, count: int) -> list[dict[str, float]]:
    study = study_for(space, seed, count)
    out = []
    for _ in range(count):
        trial = study.ask()
        out.append({r.name: r.suggest(trial) for r in space.ranges})
        study.tell(trial, 0.5)
    return out


def test_same_seed_same_trial_settings_other_seed_other(base: TrainConfig) -> None:
    space = parse_space(SPACE, base)
    assert _params(space, 7, 6) == _params(space, 7, 6)
    assert _params(space, 7, 6) != _params(space, 8, 6)
    for params in _params(space, 7, 6):
        assert 1e-4 <= params["learning_rate"] <= 3e-3 and params["batch_size"] in (4, 8)


def test_search_keeps_finished_trials_and_saves_the_best(base: TrainConfig) -> None:
    seen: list[object] = []
    result = search(base, 3, parse_space(SPACE, base), TaskControl(lambda e: seen.append(e.payload)))
    records = [p for p in seen if isinstance(p, TrialRecord)]
    assert [r.number for r in records] == [0, 1, 2] and len(result.trials) == 3
    assert any(isinstance(p, TrialProgress) and p.event.kind == "eval" for p in seen)  # the pruner's input
    finished = [t for t in result.trials if t.state == "finished"]
    assert finished and result.best is not None and result.metric == "accuracy"
    assert result.best.value == max(t.value for t in finished if t.value is not None)
    out = Path(result.output_dir)
    # the best trial's model is the output's; every finished trial stays a loadable run folder
    best_folder = Path(result.best.output_dir)
    assert best_folder.parent == out / "trials"
    assert (out / "model.safetensors").read_bytes() == (best_folder / "model.safetensors").read_bytes()
    from bertstudio.core.models import LoadRequest, load_uncached

    for trial in finished:
        assert load_uncached(LoadRequest(trial.output_dir, "classification")).info.head_report.complete
    table = json.loads((out / "search.json").read_text())
    assert table["best"]["number"] == result.best.number and len(table["trials"]) == 3
    config = json.loads((best_folder / "training_config.json").read_text())
    assert config["learning_rate"] == pytest.approx(result.best.params["learning_rate"])
    assert config["batch_size"] == result.best.params["batch_size"]
    assert not Path(str(out) + ".partial").exists()


def test_stop_mid_search_keeps_the_finished_trials(base: TrainConfig) -> None:
    stop = threading.Event()
    config = replace(base, max_steps=30)

    def on(event: object) -> None:
        payload = getattr(event, "payload", None)
        if isinstance(payload, TrialProgress) and payload.trial == 1 and payload.event.kind == "step":
            stop.set()  # the user's Stop during the second trial

    result = search(config, 4, parse_space({"learning_rate": {"low": 1e-4, "high": 1e-3}}, config),
                    TaskControl(on), stop_event=stop)
    assert result.stopped
    assert [t.state for t in result.trials] == ["finished", "stopped"]
    assert result.best is not None and result.best.number == 0
    trials = Path(result.output_dir) / "trials"
    assert sorted(p.name for p in trials.iterdir()) == ["trial-00"]  # the stopped trial left nothing


def test_a_pruned_trial_leaves_no_folder(base: TrainConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    import optuna

    monkeypatch.setattr(optuna.trial.Trial, "should_prune", lambda self: self.number == 1)
    result = search(replace(base, max_steps=8), 2, parse_space(SPACE, base))
    assert [t.state for t in result.trials] == ["finished", "pruned"]
    assert result.trials[1].value is not None and not result.trials[1].output_dir
    assert sorted(p.name for p in (Path(result.output_dir) / "trials").iterdir()) == ["trial-00"]


def test_default_space_follows_the_run(base: TrainConfig) -> None:
    names = [r.name for r in default_space(base).ranges]
    assert "epochs" not in names and "lora_rank" not in names  # max steps fix the length; no LoRA
    names = [r.name for r in default_space(replace(base, max_steps=0, lora_rank=8)).ranges]
    assert {"learning_rate", "batch_size", "warmup_ratio", "weight_decay", "epochs", "lora_rank"} == set(names)
    assert default_space(base).direction == "minimize"  # the validation loss


@pytest.mark.parametrize(("space", "words"), [
    ({"dropout": {"low": 0, "high": 1}}, "cannot be searched"),
    ({"learning_rate": {"low": 1e-3, "high": 1e-4}}, "must be below"),
    ({"learning_rate": {"low": 0, "high": 1e-4, "log": True}}, "log range"),
    ({"batch_size": {"choices": []}}, "non-empty list"),
    ({"batch_size": {"choices": [0, 8]}}, "Batch size"),
    ({"batch_size": {"choices": [2.5]}}, "whole numbers"),
    ({"epochs": {"low": 1, "high": 3}}, "max steps"),
    ({"metric": "accuracy"}, "no parameter"),
    ([], "JSON object"),
])
def test_bad_spaces_are_one_clear_error(base: TrainConfig, space: object, words: str) -> None:
    with pytest.raises(InputError, match=words):
        parse_space(space, base)


def test_space_file_errors(base: TrainConfig, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        read_space(tmp_path / "none.json", base)
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        read_space(tmp_path / "bad.json", base)


def test_search_needs_validation_data_and_refuses_a_foreign_output(base: TrainConfig, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="validation data"):
        search(replace(base, eval_share=0.0), 2)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(InputError, match="never replaced"):
        search(replace(base, output_dir=str(tmp_path / "mine")), 2)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"


def test_overwrite_replaces_an_earlier_search_and_its_trials(base: TrainConfig) -> None:
    space = parse_space({"learning_rate": {"low": 1e-4, "high": 1e-3}}, base)
    first = search(replace(base, max_steps=2), 2, space)
    with pytest.raises(InputError, match="earlier BERT Studio run"):
        search(replace(base, max_steps=2), 1, space)
    second = search(replace(base, max_steps=2, overwrite=True), 1, space)
    assert second.output_dir == first.output_dir
    assert sorted(p.name for p in (Path(second.output_dir) / "trials").iterdir()) == ["trial-00"]
    assert len(json.loads((Path(second.output_dir) / "search.json").read_text())["trials"]) == 1
