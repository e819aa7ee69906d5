"""Issue 40, `export` under the output policy: an existing .onnx is never replaced unasked (refused
before any model loads), --overwrite replaces it atomically, a second export to a file being written
is refused (the lock), and nothing is written into BERT Studio's own folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from bertstudio.core.outputs import folder_lock
from tests.conftest import run_cli


def test_an_existing_onnx_is_replaced_only_when_asked(checkpoint_factory, capfd: pytest.CaptureFixture[str],  # noqa: ANN001
                                                      tmp_path: Path) -> None:
    out = tmp_path / "model.onnx"
    out.write_bytes(b"someone else's model")
    refused = run_cli(capfd, "export", "--model", "no-such-model-folder", "--task", "classify", "--output", str(out))
    assert refused.returncode == 1 and "already exists" in refused.stderr and "--overwrite" in refused.stderr
    assert out.read_bytes() == b"someone else's model"
    model = str(checkpoint_factory("bert", "SequenceClassification"))
    done = run_cli(capfd, "export", "--model", model, "--task", "classify", "--output", str(out), "--no-speed",
                   "--overwrite")
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() != b"someone else's model" and not list(tmp_path.glob("*.partial"))


def test_a_second_export_to_the_same_file_is_refused(checkpoint_factory, capfd: pytest.CaptureFixture[str],  # noqa: ANN001
                                                     tmp_path: Path) -> None:
    out = tmp_path / "model.onnx"
    model = str(checkpoint_factory("bert", "SequenceClassification"))
    with folder_lock(out, "export"):  # the first export, still writing
        done = run_cli(capfd, "export", "--model", model, "--task", "classify", "--output", str(out), "--no-speed")
    assert done.returncode == 1 and "Another run is writing to" in done.stderr, done.stderr
    assert not out.exists()


def test_nothing_is_exported_into_the_installed_package(capfd: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    import bertstudio

    inside = Path(bertstudio.__file__).parent / "exported.onnx"
    done = run_cli(capfd, "export", "--model", "no-such-model-folder", "--task", "classify", "--output", str(inside))
    assert done.returncode == 1 and "BERT Studio's own folder" in done.stderr, done.stderr
    assert not inside.exists()
