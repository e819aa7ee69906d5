"""A real full disk (a 2 MiB tmpfs), not a mocked OSError: safetensors and torch report it with
their own exceptions. The run ends with one message (exit 1) and leaves nothing of its own
behind (no model folder, `.partial`, `.checkpoints` or lock); what it did not create stays."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bertstudio.cli import main
from tests.core.test_training import toy_csv

FREE_BYTES = 48 * 1024  # room for the lock, the markers and the event log, not for the model's weights


@contextlib.contextmanager
def small_disk(folder: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs at `folder`, filled up to FREE_BYTES (skips the test where mounting is not allowed)."""
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"a small tmpfs cannot be mounted here (needs root): {mounted.stderr.strip()[:200]}")
    try:
        filler = folder / "filler.bin"
        filler.write_bytes(b"\0" * (shutil.disk_usage(folder).free - FREE_BYTES))
        yield folder
    finally:
        if subprocess.run(["umount", str(folder)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def _train(tmp_path: Path, model: Path, output: Path, *extra: str) -> int:
    return main(["train", "--task", "text-classification", "--model", str(model),
                 "--train", str(toy_csv(tmp_path / "toy.csv", 16)), "--output", str(output), "--max-steps", "2",
                 "--batch-size", "8", "--max-length", "16", "--eval-share", "0", *extra])


def test_disk_full_at_the_final_save(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     checkpoint_factory) -> None:  # noqa: ANN001
    model = checkpoint_factory("bert", "Model")
    with small_disk(tmp_path / "disk") as disk:
        code = _train(tmp_path, model, disk / "out")
        err = capsys.readouterr().err
        assert code == 1, err
        assert "The disk is full: the model could not be saved" in err and "Traceback" not in err
        assert "internal error" not in err
        assert sorted(p.name for p in disk.iterdir()) == ["filler.bin"]  # no out, .partial, .checkpoints, .lock


def test_disk_full_at_a_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   checkpoint_factory) -> None:  # noqa: ANN001
    model = checkpoint_factory("bert", "Model")
    with small_disk(tmp_path / "disk") as disk:
        code = _train(tmp_path, model, disk / "out", "--save-steps", "1")
        err = capsys.readouterr().err
        assert code == 1 and "The disk is full: a checkpoint could not be saved" in err, err
        assert "Traceback" not in err
        assert sorted(p.name for p in disk.iterdir()) == ["filler.bin"]  # the half-written checkpoint went too


def test_disk_full_keeps_the_folders_it_did_not_create(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       checkpoint_factory) -> None:  # noqa: ANN001
    model = checkpoint_factory("bert", "Model")
    with small_disk(tmp_path / "disk") as disk:
        (disk / "out.checkpoints").mkdir()  # the user's (empty, so the run may use it)
        code = _train(tmp_path, model, disk / "out")
        err = capsys.readouterr().err
        assert code == 1 and "The disk is full" in err, err
        assert (disk / "out.checkpoints").is_dir()  # not ours to delete
        assert sorted(p.name for p in disk.iterdir()) == ["filler.bin", "out.checkpoints"]
