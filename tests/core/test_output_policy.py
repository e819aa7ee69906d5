"""Issue 40, one output policy (core/outputs.py): a file we did not create is replaced only when asked,
writes are atomic, and nothing goes into BERT Studio's own folder: Fine-tune on failures on a demo
dataset (which lives in resources/) and a training output there are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.outputs import atomic_path, inside_package, output_file, write_json
from bertstudio.resources import resource_path


def test_an_existing_file_is_replaced_only_when_asked(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    assert output_file(target) == target
    target.write_text("theirs", encoding="utf-8")
    with pytest.raises(InputError, match="already exists"):
        output_file(target)
    assert output_file(target, overwrite=True) == target
    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(InputError, match="not a regular file"):
        output_file(tmp_path / "folder.csv", overwrite=True)
    with pytest.raises(InputError, match="does not exist"):
        output_file(tmp_path / "missing" / "out.csv")


def test_an_atomic_write_leaves_the_old_file_whole_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_path(target) as temporary:
        temporary.write_text("half", encoding="utf-8")
        raise RuntimeError("disk full")
    assert target.read_text(encoding="utf-8") == "old" and list(tmp_path.iterdir()) == [target]
    write_json(target, {"loss": float("nan")})
    assert '"loss": null' in target.read_text(encoding="utf-8")


def test_the_package_and_its_resources_are_never_an_output() -> None:
    assert inside_package(resource_path("datasets", "ner_train.conll"))
    assert inside_package(Path(__file__).parents[2] / "bertstudio" / "core")
    assert not inside_package(Path.home() / "data.csv")


def test_fine_tune_on_failures_never_writes_into_resources(tmp_path: Path) -> None:
    from bertstudio.core.suites.fix import fix_file
    from bertstudio.core.suites.fix_tasks import task_fix_file

    demo = resource_path("datasets", "ner_train.conll")
    before = sorted(p.name for p in demo.parent.iterdir())
    with pytest.raises(InputError, match="BERT Studio's own folder"):
        fix_file(demo, [])
    with pytest.raises(InputError, match="BERT Studio's own folder"):
        task_fix_file("ner", demo, [])
    assert sorted(p.name for p in demo.parent.iterdir()) == before


def test_a_training_output_inside_the_package_is_refused() -> None:
    from bertstudio.core.training.saving import check_output

    with pytest.raises(InputError, match="BERT Studio's own folder"):
        check_output(str(resource_path("datasets", "ner_train-model")), replace=False)



def test_a_pipe_as_the_training_output_is_refused_and_left_where_it_is(tmp_path) -> None:  # noqa: ANN001
    """A FIFO (or socket, or device) at --output was moved aside to <output>.old-PID and a folder written
    there (as root, --output /dev/null would move /dev/null itself): anything not a folder is refused."""
    import os
    import stat

    from bertstudio.core.training.saving import check_output

    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a folder"):
        check_output(str(fifo), replace=True)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_atomic_writes_give_a_new_file_the_usual_permissions_and_keep_a_replaced_files(tmp_path) -> None:  # noqa: ANN001
    """mkstemp makes 0600 files: a saved card, CSV or cache must read like any file the user saves."""
    import os
    import stat

    from bertstudio.core import outputs

    fresh = outputs.write_text(tmp_path / "new.txt", "a")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~outputs._UMASK
    kept = tmp_path / "kept.txt"
    kept.write_text("old")
    os.chmod(kept, 0o640)
    outputs.write_text(kept, "new")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and kept.read_text() == "new"
