"""Real processes, real signals: SIGINT and SIGTERM save what was trained; kill -9 in the
middle of a checkpoint write leaves a run that resumes from the last complete checkpoint;
tampered resume files and pickled model weights are refused without running their payload."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from bertstudio.cli import main
from bertstudio.core.progress import TaskControl
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.engine import train
from bertstudio.core.training.events import TrainingEvent
from bertstudio.core.training.saving import MARKER
from tests.core.test_training import toy_csv

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(ROOT)}


def _args(model: Path, data: Path, output: Path, *extra: str) -> list[str]:
    return ["train", "--task", "text-classification", "--model", str(model), "--train", str(data),
            "--output", str(output), "--batch-size", "8", "--max-length", "16", "--lr", "1e-3", *extra]


def _signalled_run(command: list[str], signum: int) -> tuple[int, list[dict], str]:
    """Run the CLI until its first evaluation, send it `signum`, wait for the end: its exit code,
    its stdout as JSON lines (the parse proves stdout is pure JSON, evaluations included), its stderr."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT)
    lines: list[dict] = []
    assert process.stdout is not None
    for raw in process.stdout:
        lines.append(json.loads(raw))
        if lines[-1]["event"] == "eval":
            process.send_signal(signum)
            break
    rest, err = process.communicate(timeout=300)
    return process.returncode, lines + [json.loads(line) for line in rest.splitlines()], err


def _killed_run(args: list[str], folder: Path) -> subprocess.CompletedProcess[str]:
    """Run the CLI under KILLER (below): it dies by SIGKILL in the middle of writing checkpoint-4.
    Its output goes to files: several of these run at once and nobody reads their pipes meanwhile."""
    with open(folder / "stdout.txt", "w+") as out, open(folder / "stderr.txt", "w+") as err:
        code = subprocess.run([sys.executable, "-c", KILLER, *args], stdout=out, stderr=err, env=ENV, cwd=ROOT,
                              timeout=300).returncode
        out.seek(0), err.seek(0)
        return subprocess.CompletedProcess(args, code, out.read(), err.read())


KILLED_TASKS = ("text-classification", "qa", "choice", "regression")


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory: pytest.TempPathFactory, checkpoint_factory) -> Iterator[dict]:  # noqa: ANN001
    """Every real-process run of this module, started side by side when the first test asks: each is
    still its own process with its own signal or SIGKILL, but the two cores import torch and train
    for several of them at once instead of one after another (about half the wall time).
    Keys: a signal number -> (output folder, Future of _signalled_run); a task -> (its TrainConfig,
    Future of _killed_run)."""
    from tests.core.test_training_tasks import task_config

    model = checkpoint_factory("bert", "Model")
    runs: dict[object, tuple[object, Future]] = {}
    with ThreadPoolExecutor(max_workers=len(KILLED_TASKS) + 2) as pool:
        for signum in (signal.SIGINT, signal.SIGTERM):
            root = tmp_path_factory.mktemp(f"signal-{signum}")
            output = root / "out"
            command = [sys.executable, "-m", "bertstudio", *_args(model, toy_csv(root / "toy.csv", 32), output,
                                                                  "--max-steps", "100000", "--eval-steps", "2",
                                                                  "--json")]
            runs[signum] = (output, pool.submit(_signalled_run, command, signum))
        for task in KILLED_TASKS:
            root = tmp_path_factory.mktemp(f"killed-{task}")
            output = root / "out"
            if task == "text-classification":
                config = TrainConfig(task=task, model=str(model), train_file=str(toy_csv(root / "toy.csv", 32)),
                                     output_dir=str(output), eval_share=0.0, max_steps=8, save_steps=2, batch_size=8,
                                     max_length=16, learning_rate=1e-3)
                args = _args(model, Path(config.train_file), output, "--max-steps", "8", "--save-steps", "2",
                             "--eval-share", "0")
            else:
                config = task_config(task, root, model, save_steps=2, eval_file=None, eval_share=0.0,
                                     output_dir=str(output))
                args = ["train", "--task", task, "--model", config.model, "--train", config.train_file, "--output",
                        str(output), "--max-steps", "8", "--save-steps", "2", "--eval-share", "0", "--batch-size",
                        "4", "--max-length", "64", "--lr", str(config.learning_rate), "--warmup-steps",
                        str(config.warmup_steps), "--seed", str(config.seed)]
            runs[task] = (config, pool.submit(_killed_run, args, root))
        yield runs


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_stops_and_saves(real_runs: dict, signum: int) -> None:
    output, future = real_runs[signum]
    code, lines, err = future.result()
    assert code == 0, err
    assert "Traceback" not in err and "stopping after this step and saving" in err
    result = lines[-1]
    assert result["event"] == "result" and result["stopped"] and 2 <= result["step"] < 100000
    assert (output / "model.safetensors").is_file() and (output / MARKER).is_file()
    assert result["checkpoints_dir"] and any(Path(result["checkpoints_dir"]).glob(f"checkpoint-{result['step']}"))


# The CLI's main in a real process; one line on stderr when the model starts loading.
LOADING = textwrap.dedent("""
    import sys
    from bertstudio.core import progress
    report = progress.TaskControl.report
    def watched(self, message, fraction=None, payload=None):
        if message.startswith("Loading "):
            print("LOADING", file=sys.stderr, flush=True)
        report(self, message, fraction, payload)
    progress.TaskControl.report = watched
    from bertstudio.cli import main
    raise SystemExit(main(sys.argv[1:]))
""")


def test_ctrl_c_before_the_first_step_cancels_at_once(tmp_path: Path, checkpoint_factory) -> None:  # noqa: ANN001
    """Reading, loading and tokenizing are no step to finish: Ctrl+C there cancels (exit 130) and
    leaves nothing (no model folder, no checkpoints folder, no lock)."""
    import time

    output = tmp_path / "out"
    command = [sys.executable, "-c", LOADING, *_args(checkpoint_factory("bert", "Model"),
                                                     toy_csv(tmp_path / "toy.csv", 32), output, "--max-steps", "50")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT)
    assert process.stderr is not None
    assert process.stderr.readline().strip() == "LOADING"
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, out + err
    assert err.strip().splitlines()[-1] == "Cancelled." and "Traceback" not in err, err
    assert "step 1/" not in err and time.monotonic() - sent < 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy.csv"]


KILLER = textwrap.dedent("""
    import os, signal, sys
    import torch
    real_save = torch.save
    def save(obj, path, *args, **kwargs):
        if "checkpoint-4" in str(path) and str(path).endswith("optimizer.pt"):
            with open(path, "wb") as handle:
                handle.write(b"PK\\x03\\x04 half")  # the write has begun...
            os.kill(os.getpid(), signal.SIGKILL)  # ...and the power goes
        return real_save(obj, path, *args, **kwargs)
    torch.save = save
    from bertstudio.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def test_kill_9_during_checkpoint_write_then_resume(real_runs: dict) -> None:
    config, future = real_runs["text-classification"]
    killed = future.result()
    output = Path(config.output_dir)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    checkpoints = Path(str(output) + ".checkpoints")
    assert (checkpoints / "checkpoint-2" / "optimizer.pt").is_file()
    assert (checkpoints / "checkpoint-4" / "model.safetensors").is_file()  # half-written: weights, no state
    assert Path(str(output) + ".lock").is_file()  # left by the dead process

    events: list[TrainingEvent] = []
    control = TaskControl(lambda e: events.append(e.payload) if isinstance(e.payload, TrainingEvent) else None)
    result = train(replace(config, resume=True), control)
    steps = [e.step for e in events if e.kind == "step"]
    assert steps == [3, 4, 5, 6, 7, 8] and not result.stopped
    assert "checkpoint-4 is incomplete" in events[0].message
    assert (output / "model.safetensors").is_file() and not checkpoints.exists()


@pytest.mark.parametrize("task", ["qa", "choice", "regression"])
def test_kill_9_then_resume_for_a_new_task(real_runs: dict, task: str) -> None:
    """Killed while writing checkpoint-4: the resume starts from checkpoint-2 and the learning rates it
    logs continue get_scheduler's curve of the whole run (warmup included), not a new one."""
    from tests.core.test_training_tasks import reference_lrs

    config, future = real_runs[task]
    killed = future.result()
    output = Path(config.output_dir)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert Path(str(output) + ".lock").is_file()  # left by the dead process
    events: list[TrainingEvent] = []
    control = TaskControl(lambda e: events.append(e.payload) if isinstance(e.payload, TrainingEvent) else None)
    result = train(replace(config, resume=True), control)
    logged = {e.step: e.learning_rate for e in events if e.kind == "step"}
    assert sorted(logged) == [3, 4, 5, 6, 7, 8] and not result.stopped
    assert "checkpoint-4 is incomplete" in events[0].message
    for step, expected in enumerate(reference_lrs(config, 8), start=1):
        if step in logged:
            assert logged[step] == pytest.approx(expected, rel=1e-9, abs=1e-15), step
    assert (output / "model.safetensors").is_file() and not Path(str(output) + ".checkpoints").exists()
    assert not Path(str(output) + ".lock").exists()


# -- tampered files -------------------------------------------------------------------------------
class _Payload:
    """Unpickling it writes "ran" to `sentinel`: a file holding it is a tampered file whose payload
    shows whether it ran. Written in this process: the pickle names pathlib, not this class."""

    def __init__(self, sentinel: Path) -> None:
        self.sentinel = sentinel

    def __reduce__(self) -> tuple[object, tuple[Path, str]]:
        return (Path.write_text, (self.sentinel, "ran"))


def _write_payload(path: Path, sentinel: Path) -> None:
    import torch

    torch.save({"state": _Payload(sentinel)}, path)


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory: pytest.TempPathFactory, checkpoint_factory) -> Path:  # noqa: ANN001
    """A run stopped at step 2: its output and resumable checkpoint, copied by each test."""
    root = tmp_path_factory.mktemp("stopped")
    stop = threading.Event()

    def on_event(event) -> None:  # noqa: ANN001
        if isinstance(event.payload, TrainingEvent) and event.payload.kind == "step" and event.payload.step >= 2:
            stop.set()

    config = TrainConfig(task="text-classification", model=str(checkpoint_factory("bert", "Model")),
                         train_file=str(toy_csv(root / "toy.csv", 32)), output_dir=str(root / "run" / "out"),
                         eval_share=0.0, max_steps=50, batch_size=8, max_length=16)
    result = train(config, TaskControl(on_event), stop_event=stop)
    assert result.stopped
    return root


@pytest.mark.parametrize("name", ["optimizer.pt", "scheduler.pt", "rng_state.pth"])
def test_tampered_resume_file_is_refused(tmp_path: Path, stopped_run: Path, checkpoint_factory,  # noqa: ANN001
                                         capsys: pytest.CaptureFixture[str], name: str) -> None:
    shutil.copytree(stopped_run / "run", tmp_path / "run")
    output = tmp_path / "run" / "out"
    checkpoint = next(Path(str(output) + ".checkpoints").glob("checkpoint-*"))
    sentinel = tmp_path / "payload-ran"
    _write_payload(checkpoint / name, sentinel)
    code = main(_args(checkpoint_factory("bert", "Model"), stopped_run / "toy.csv", output, "--max-steps", "50",
                      "--eval-share", "0", "--resume"))
    err = capsys.readouterr().err
    assert code == 1 and name in err and "was not loaded" in err and "Traceback" not in err
    assert not sentinel.exists()


def test_pickled_or_broken_model_is_refused(tmp_path: Path, checkpoint_factory,  # noqa: ANN001
                                            capsys: pytest.CaptureFixture[str]) -> None:
    data = toy_csv(tmp_path / "toy.csv", 16)
    pickled = tmp_path / "pickled"
    shutil.copytree(checkpoint_factory("bert", "Model"), pickled)
    (pickled / "model.safetensors").unlink()
    sentinel = tmp_path / "payload-ran"
    _write_payload(pickled / "pytorch_model.bin", sentinel)
    broken = tmp_path / "broken"
    shutil.copytree(checkpoint_factory("bert", "Model"), broken)
    (broken / "model.safetensors").write_bytes(b"\x00" * 64)
    for folder in (pickled, broken):
        code = main(_args(folder, data, tmp_path / f"out-{folder.name}", "--max-steps", "2"))
        err = capsys.readouterr().err
        assert code == 1 and "cannot be loaded" in err and "Traceback" not in err, err
        assert not (tmp_path / f"out-{folder.name}").exists()
    assert not sentinel.exists()


def test_stop_during_a_mid_run_evaluation_saves_a_resumable_checkpoint(tmp_path: Path, checkpoint_factory,  # noqa: ANN001
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from transformers import Trainer

    from bertstudio.core.training.saving import checkpoint_problem

    stop = threading.Event()
    real = Trainer.prediction_step

    def stop_now(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        stop.set()  # the user presses Stop while the step-2 evaluation runs
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Trainer, "prediction_step", stop_now)
    config = TrainConfig(task="text-classification", model=str(checkpoint_factory("bert", "Model")),
                         train_file=str(toy_csv(tmp_path / "toy.csv", 32)), output_dir=str(tmp_path / "out"),
                         eval_share=0.25, eval_steps=2, max_steps=10, batch_size=8, max_length=16)
    first = train(config, stop_event=stop)
    assert first.stopped and first.step == 2 and (tmp_path / "out" / "model.safetensors").is_file()
    assert checkpoint_problem(Path(first.checkpoints_dir) / "checkpoint-2") is None
    monkeypatch.setattr(Trainer, "prediction_step", real)
    events: list[TrainingEvent] = []
    control = TaskControl(lambda e: events.append(e.payload) if isinstance(e.payload, TrainingEvent) else None)
    second = train(replace(config, resume=True), control)
    assert [e.step for e in events if e.kind == "step"] == list(range(3, 11)) and not second.stopped
