"""Training refuses, before any model is loaded, everything that would lose files or fail late:
foreign output folders survive, bad numbers are named, a second run on one output is locked
out, a full disk leaves no `.partial`, numeric labels are one class each."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bertstudio.cli import main
from bertstudio.core.errors import DeviceError, InputError
from bertstudio.core.outputs import lock_path
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.engine import train
from bertstudio.core.training.saving import MARKER, write_marker
from bertstudio.core.training.trainable import TRAINABLE
from tests.core.test_training import toy_csv

MISSING_MODEL = "/nonexistent/bertstudio-model"  # a check that passes must not have needed the model


def cli(capsys: pytest.CaptureFixture[str], *extra: str, model: str = MISSING_MODEL,
        train_file: str | None = None, output: str | None = None, tmp: Path | None = None) -> tuple[int, str]:
    assert tmp is not None
    data = train_file or str(toy_csv(tmp / "toy.csv", 16))
    args = ["train", "--task", "text-classification", "--model", model, "--train", data,
            "--output", output or str(tmp / "out"), "--max-steps", "2", "--batch-size", "8", "--max-length", "16",
            *extra]
    code = main(args)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def test_foreign_folder_is_never_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    documents = tmp_path / "Documents"
    documents.mkdir()
    (documents / "thesis.txt").write_text("years of work", encoding="utf-8")
    code, err = cli(capsys, output=str(documents), tmp=tmp_path)
    assert code == 1 and "not a BERT Studio model folder" in err and "Documents/bertstudio-model" in err
    code, err = cli(capsys, "--overwrite", output=str(documents), tmp=tmp_path)  # --overwrite is for our runs only
    assert code == 1 and "not a BERT Studio model folder" in err
    assert (documents / "thesis.txt").read_text(encoding="utf-8") == "years of work"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Documents", "toy.csv"]  # no lock, no .partial left


def test_current_folder_and_home_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "keep.txt").write_text("x", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for target in (".", str(tmp_path.parent), str(Path.home())):
        code, err = cli(capsys, output=target, tmp=tmp_path)
        assert code == 1 and "cannot be the output folder" in err, target
    assert (tmp_path / "keep.txt").is_file()


def test_our_earlier_run_is_replaced_only_with_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         checkpoint_factory) -> None:  # noqa: ANN001
    earlier = tmp_path / "run"
    write_marker(earlier, "model", "text-classification")
    (earlier / "old.bin").write_bytes(b"old")
    model = str(checkpoint_factory("bert", "Model"))
    code, err = cli(capsys, model=model, output=str(earlier), tmp=tmp_path)
    assert code == 1 and "earlier BERT Studio run" in err and "--overwrite" in err
    assert (earlier / "old.bin").is_file()
    code, _err = cli(capsys, "--overwrite", "--eval-share", "0", model=model, output=str(earlier), tmp=tmp_path)
    assert code == 0 and not (earlier / "old.bin").exists()
    assert (earlier / "model.safetensors").is_file() and json.loads((earlier / MARKER).read_text())["kind"] == "model"
    assert not lock_path(earlier).exists()


def test_file_and_read_only_outputs_are_refused_before_loading(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "model.txt"
    a_file.write_text("x", encoding="utf-8")
    code, err = cli(capsys, output=str(a_file), tmp=tmp_path)
    assert code == 1 and "is a file" in err
    code, err = cli(capsys, output=str(a_file / "sub"), tmp=tmp_path)
    assert code == 1 and "is a file, not a folder" in err
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        target = locked / "out"
        if os.access(locked, os.W_OK) and os.geteuid() == 0:
            target = Path("/proc/bertstudio-out")  # root writes through permission bits: use a read-only mount
        code, err = cli(capsys, output=str(target), tmp=tmp_path)
        assert code == 1 and "not writable" in err
    finally:
        locked.chmod(0o755)


@pytest.mark.parametrize(("flags", "message"), [
    (("--lr", "nan"), "must be a finite number"),
    (("--lr", "inf"), "must be a finite number"),
    (("--lr", "0"), "must be > 0"),
    (("--lr=-1e-5",), "must be > 0"),
    (("--eval-share", "1.5"), "must be >= 0 and < 1"),
    (("--eval-share", "1"), "must be >= 0 and < 1"),
    (("--eval-share", "-0.1"), "must be >= 0 and < 1"),
    (("--max-steps", "-5"), "Max steps (--max-steps) is -5"),
    (("--batch-size", "0"), "Batch size (--batch-size) is 0"),
    (("--warmup-ratio", "nan"), "must be a finite number"),
])
def test_bad_numbers_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...],
                               message: str) -> None:
    code, err = cli(capsys, *flags, tmp=tmp_path)
    assert code == 1 and message in err


def test_train_folder_and_missing_cuda(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = cli(capsys, train_file=str(tmp_path), tmp=tmp_path)
    assert code == 1 and "is a folder" in err
    import torch

    if not torch.cuda.is_available():
        code, err = cli(capsys, "--device", "cuda", tmp=tmp_path)
        assert code == 1 and "'cuda:0' is not available" in err


def test_second_run_on_one_output_is_locked_out(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                checkpoint_factory) -> None:  # noqa: ANN001
    output = tmp_path / "out"
    lock = lock_path(output)
    import socket

    lock.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": "10:00"}))
    code, err = cli(capsys, model=str(checkpoint_factory("bert", "Model")), tmp=tmp_path)
    assert code == 1 and f"Another run is writing to '{output}'" in err and f"process {os.getpid()}" in err
    assert lock.is_file() and not output.exists()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lock.write_text(json.dumps({"pid": int(gone.stdout), "host": socket.gethostname()}))  # left by a kill -9
    code, err = cli(capsys, "--eval-share", "0", model=str(checkpoint_factory("bert", "Model")), tmp=tmp_path)
    assert code == 0 and (output / "model.safetensors").is_file() and not lock.exists()


def test_disk_full_at_save_leaves_no_partial(tmp_path: Path, checkpoint_factory,  # noqa: ANN001
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import transformers.modeling_utils

    def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(transformers.modeling_utils, "safe_save_file", full)
    config = TrainConfig(task="text-classification", model=str(checkpoint_factory("bert", "Model")),
                         train_file=str(toy_csv(tmp_path / "toy.csv", 16)), output_dir=str(tmp_path / "out"),
                         eval_share=0.0, max_steps=2, batch_size=8, max_length=16)
    with pytest.raises(DeviceError, match="disk is full"):
        train(config)
    assert not (tmp_path / "out.partial").exists() and not (tmp_path / "out").exists()
    assert not lock_path(tmp_path / "out").exists()


def test_numeric_labels_are_one_class_each(tmp_path: Path) -> None:
    data = tmp_path / "numbers.csv"
    data.write_text("text,label\n" + "".join(f"row {i},{label}\n" for i, label in
                                             enumerate(["1", "1.0", "01", "0", "0.0", "1", "0", "00"])))
    read = TRAINABLE["text-classification"].read(
        TrainConfig(task="text-classification", train_file=str(data), output_dir="x", model="m", eval_share=0.0))
    assert read.labels == ["0", "1"] and "normalised" in read.notes[0] and "'1.0'" in read.notes[0]


def test_validate_needs_no_model(tmp_path: Path) -> None:
    config = TrainConfig(task="text-classification", model="m", train_file="t", output_dir="o")
    for bad in (replace(config, learning_rate=float("nan")), replace(config, eval_share=1.5),
                replace(config, max_steps=-5), replace(config, scheduler="sideways"), replace(config, task="x")):
        with pytest.raises(InputError):
            bad.validate()


@pytest.mark.parametrize("make", ["self", "pair"])
def test_output_at_a_symlink_loop_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], make: str) -> None:
    loop = tmp_path / "loop"
    if make == "self":
        loop.symlink_to(loop)
    else:
        (tmp_path / "other").symlink_to(loop)
        loop.symlink_to(tmp_path / "other")
    for output in (str(loop), str(loop / "model")):
        code, err = cli(capsys, output=output, tmp=tmp_path)
        assert code == 1 and "symbolic link that points to itself (a loop)" in err, err
        assert len(err.strip().splitlines()) == 2 and "internal error" not in err  # error: ... and hint: ...
