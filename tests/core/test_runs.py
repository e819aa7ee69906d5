"""Run history: every training run is recorded when it ends (finished, stopped, failed) with its
config, data fingerprint, metrics and curves; TensorBoard files are written beside the model; the
index survives concurrent writers and damaged files; configs diff; delete removes only ours."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.progress import TaskControl
from bertstudio.core.runs import index
from bertstudio.core.runs.curves import Curves, parse_events, thin
from bertstudio.core.runs.delete import delete_run
from bertstudio.core.runs.diff import config_diff, run_diff
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.engine import train
from bertstudio.core.training.events import TrainingEvent
from bertstudio.core.training.resume import file_digest
from tests.core.test_training import toy_csv


@pytest.fixture
def runs_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "runs-index"
    monkeypatch.setenv(index.RUNS_DIR_ENV, str(folder))
    return folder


@pytest.fixture
def tiny_config(tmp_path: Path, checkpoint_factory) -> TrainConfig:  # noqa: ANN001
    return TrainConfig(
        task="text-classification", model=str(checkpoint_factory("bert", "Model")),
        train_file=str(toy_csv(tmp_path / "toy.csv", 24)), output_dir=str(tmp_path / "out"), eval_share=0.25,
        eval_steps=1, max_steps=2, batch_size=8, learning_rate=1e-3, max_length=16, seed=0,
    )


def test_a_finished_run_is_recorded_with_its_fingerprint_metrics_and_curves(
        tiny_config: TrainConfig, runs_folder: Path) -> None:
    result = train(tiny_config)
    (record,) = index.list_runs()
    assert record.status == "finished" and record.task == "text-classification" and record.device == "cpu"
    assert record.output_dir == result.output_dir and record.metrics == result.metrics
    assert record.data.startswith(f"sha256 {file_digest(tiny_config.train_file)} of the training file, 18 rows")
    assert record.config["learning_rate"] == 1e-3 and record.config["max_steps"] == 2
    assert [step for step, _ in record.curves.loss] == [1, 2]
    assert [step for step, _ in record.curves.learning_rate] == [1, 2]
    assert [step for step, _ in record.curves.evals["accuracy"]] == [1, 2]
    assert record.open_in == tuple(result.open_in) and record.step == 2 and record.duration_seconds > 0
    assert (runs_folder / f"{record.id}.json").is_file()


def test_trainer_writes_tensorboard_files_into_the_model_folder(tiny_config: TrainConfig, runs_folder: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events: list[TrainingEvent] = []
    control = TaskControl(lambda e: events.append(e.payload) if isinstance(e.payload, TrainingEvent) else None)
    result = train(tiny_config, control)
    (logdir,) = (Path(result.output_dir) / "runs").iterdir()
    accumulator = EventAccumulator(str(logdir))
    accumulator.Reload()
    losses = [(s.step, s.value) for s in accumulator.Scalars("train/loss")]
    ours = [(e.step, e.loss) for e in events if e.kind == "step"]
    assert [s for s, _ in losses] == [1, 2]
    assert [v for _, v in losses] == pytest.approx([v for _, v in ours], rel=1e-5)
    assert [s.step for s in accumulator.Scalars("eval/accuracy")] == [1, 2]
    assert not Path(result.output_dir + ".checkpoints").exists()  # nothing left behind


def test_a_stopped_run_is_recorded_as_stopped(tiny_config: TrainConfig, runs_folder: Path) -> None:
    stop = threading.Event()
    stop.set()
    result = train(replace(tiny_config, max_steps=5, eval_steps=0), stop_event=stop)
    (record,) = index.list_runs()
    assert result.stopped and record.status == "stopped" and record.step == result.step < 5


def test_a_run_that_fails_is_recorded_with_why_and_the_curves_it_drew(
        tiny_config: TrainConfig, runs_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bertstudio.core.training import engine

    def broken(*_args: object, **_kwargs: object) -> None:
        raise InputError("The validation could not be scored.")

    monkeypatch.setattr(engine, "_final_metrics", broken)
    with pytest.raises(InputError):
        train(tiny_config)
    (record,) = index.list_runs()
    assert record.status == "failed" and record.error == "The validation could not be scored."
    assert [step for step, _ in record.curves.loss] == [1, 2]  # read before the checkpoints folder went
    assert record.data.startswith(f"sha256 {file_digest(tiny_config.train_file)}") and record.open_in == ()


def test_a_run_whose_data_is_bad_is_recorded_failed(tiny_config: TrainConfig, runs_folder: Path) -> None:
    bad = Path(tiny_config.train_file).with_name("bad.csv")
    bad.write_text("text,label\nonly one row,positive\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        train(replace(tiny_config, train_file=str(bad)))
    (record,) = index.list_runs()
    assert record.status == "failed" and record.error == raised.value.message and record.data == ""


def test_an_index_that_cannot_be_written_does_not_fail_the_run(
        tiny_config: TrainConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv(index.RUNS_DIR_ENV, str(blocker / "runs"))
    result = train(replace(tiny_config, eval_share=0.0, eval_steps=0))
    assert not result.stopped and Path(result.output_dir).is_dir()


def record(run_id: str, output: str = "/nowhere", **fields: object) -> index.RunRecord:
    values: dict = dict(id=run_id, task="text-classification", status="finished", started="2026-11-26T10:00:00",
                        duration_seconds=1.0, device="cpu", output_dir=output, model="m", data="sha256 ab")
    values.update(fields)
    return index.RunRecord(**values)


def test_concurrent_writers_lose_no_record(runs_folder: Path) -> None:
    ids = [index.new_id() for _ in range(40)]
    threads = [threading.Thread(target=index.write_record, args=(record(i),)) for i in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.id for r in index.list_runs()) == sorted(ids)
    assert len(set(ids)) == 40


def test_damaged_and_foreign_files_are_skipped(runs_folder: Path) -> None:
    good = record("20261126-100000-00000001", curves=Curves(((1, 0.5), (2, 0.4)), (), {"f1": ((2, 0.7),)}))
    index.write_record(good)
    (runs_folder / "20261126-100000-00000002.json").write_text("{not json", encoding="utf-8")
    (runs_folder / "20261126-100000-00000003.json").write_text('{"id": 3}', encoding="utf-8")
    (runs_folder / "renamed.json").write_text((runs_folder / f"{good.id}.json").read_text(), encoding="utf-8")
    (runs_folder / "20261126-100000-00000004.json").symlink_to(runs_folder / f"{good.id}.json")
    (runs_folder / "20261126-100000-00000005.json").write_bytes(b"[" * (index.MAX_RECORD_BYTES + 10))
    (runs_folder / "20261126-100000-00000006.json").write_text(
        '{"id": "20261126-100000-00000006", "status": "finished", "curves": {"loss": [[1, "x"]]}}', encoding="utf-8")
    assert index.list_runs() == [good]
    with pytest.raises(ValueError):
        index.record_path("../../etc/passwd")


def test_curves_keep_the_resumed_value_skip_damage_and_thin_to_first_and_last() -> None:
    lines = ['{"event": "step", "step": 1, "loss": 2.0, "learning_rate": 0.1}',
             '{"event": "step", "step": 2, "loss": 1.5, "learning_rate": 0.2}',
             "{damaged", '{"event": "step", "step": -1, "loss": 1.0}', '{"event": "step", "step": 3, "loss": "x"}',
             '{"event": "eval", "step": 2, "metrics": {"accuracy": 0.5, "f1": true}}',
             '{"event": "step", "step": 2, "loss": 1.25, "learning_rate": 0.2}']  # a resume repeats step 2
    curves = parse_events(lines)
    assert curves.loss == ((1, 2.0), (2, 1.25)) and curves.learning_rate == ((1, 0.1), (2, 0.2))
    assert curves.evals == {"accuracy": ((2, 0.5),)}
    points = tuple((i, float(i)) for i in range(10_001))
    thinned = thin(points, 1000)
    assert len(thinned) == 1000 and thinned[0] == points[0] and thinned[-1] == points[-1]
    assert Curves.from_json(curves.to_json()) == curves


def test_config_diff_names_every_differing_setting_dotted() -> None:
    first = {"learning_rate": 5e-5, "distill": {"teacher": "a", "temperature": 2.0}, "seed": 1}
    second = {"learning_rate": 1e-4, "distill": {"teacher": "a", "temperature": 4.0}, "seed": 1, "extra": None}
    assert [(d.key, d.first, d.second) for d in config_diff(first, second)] == [
        ("distill.temperature", "2.0", "4.0"), ("extra", "(not set)", "null"), ("learning_rate", "5e-05", "0.0001")]
    a, b = record("a-1", config={"seed": 1}), record("b-1", config={"seed": 1}, data="sha256 cd")
    assert [(d.key, d.first, d.second) for d in run_diff(a, b)] == [("data fingerprint", "sha256 ab", "sha256 cd")]


def test_delete_removes_only_what_bert_studio_made(runs_folder: Path, tmp_path: Path) -> None:
    from bertstudio.core.training.saving import checkpoints_dir, write_marker

    ours, theirs, shared = tmp_path / "ours", tmp_path / "theirs", tmp_path / "shared"
    write_marker(ours, "model", "text-classification")
    write_marker(checkpoints_dir(ours), "checkpoints", "text-classification")
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine", encoding="utf-8")
    write_marker(shared, "model", "text-classification")
    runs = [record("r-1", str(ours)), record("r-2", str(theirs)), record("r-3", str(shared)),
            record("r-4", str(shared))]
    for run in runs:
        index.write_record(run)
    done = delete_run(runs[0], runs)
    assert not ours.exists() and not checkpoints_dir(ours).exists() and len(done.removed) == 2
    kept = delete_run(runs[1], runs)
    assert (theirs / "notes.txt").is_file() and "not made by BERT Studio" in kept.message()
    assert "another recorded run" in delete_run(runs[2], runs).message() and shared.is_dir()
    assert [r.id for r in index.list_runs()] == ["r-4"]


def test_a_resumed_run_keeps_both_parts_in_tensorboard_and_in_its_record(
        tiny_config: TrainConfig, runs_folder: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    stop = threading.Event()

    def on_event(event) -> None:  # noqa: ANN001
        if isinstance(event.payload, TrainingEvent) and event.payload.kind == "step" and event.payload.step == 2:
            stop.set()

    config = replace(tiny_config, max_steps=4, eval_steps=0, eval_share=0.0)
    first = train(config, TaskControl(on_event), stop_event=stop)
    assert first.stopped and first.checkpoints_dir
    second = train(replace(config, resume=True))
    steps: set[int] = set()
    for folder in (Path(second.output_dir) / "runs").iterdir():
        accumulator = EventAccumulator(str(folder))
        accumulator.Reload()
        steps |= {s.step for s in accumulator.Scalars("train/loss")}
    assert steps == {1, 2, 3, 4}
    newest, older = index.list_runs()
    assert (older.status, newest.status) == ("stopped", "finished")
    assert [step for step, _ in newest.curves.loss] == [1, 2, 3, 4]


def test_deleting_a_symlinked_run_reports_it_kept_not_removed(runs_folder: Path, tmp_path: Path) -> None:
    """Issue 40: rmtree refuses a symbolic link, and ignore_errors hid it: the run was reported removed."""
    from bertstudio.core.training.saving import write_marker

    real = tmp_path / "real"
    write_marker(real, "model", "text-classification")
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    run = record("r-1", str(link))
    index.write_record(run)
    done = delete_run(run, [run])
    assert done.removed == () and "symbolic link" in done.message()
    assert link.is_symlink() and real.is_dir()
