"""The CLI's promise: a user error is one message and exit 1, a bug is one line plus a crash log
and exit 2, never a traceback wall (issue 10 items 7 and 8)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults.custom_code import custom_code_models_dir


def bertstudio(*args: str | bytes, tmp_path: Path, code: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_STATE_HOME": str(tmp_path / "state")}
    command = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "bertstudio", *args]
    return subprocess.run(command, capture_output=True, timeout=120, env=env)


def test_invalid_utf8_text_is_a_clear_user_error(tmp_path: Path) -> None:
    done = bertstudio("fill-mask", "--model", "some/model", b"caf\xe9 [MASK] \xff", tmp_path=tmp_path)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1, err
    assert "not valid UTF-8" in err and "text argument" in err
    assert "Traceback" not in err


def test_a_bug_prints_one_line_and_a_crash_log(tmp_path: Path) -> None:
    code = """
import sys
import bertstudio.core.catalog as catalog
from bertstudio.cli import main
def broken(root):
    raise ZeroDivisionError("a bug we did not expect")
catalog.list_local_models = broken
sys.exit(main(["models", "--models-dir", sys.argv[1]]))
"""
    done = bertstudio(str(tmp_path), tmp_path=tmp_path, code=code)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("internal error: ZeroDivisionError"), err
    logs = list((tmp_path / "state" / "bertstudio" / "crashes").glob("crash-*.log"))
    assert len(logs) == 1 and str(logs[0]) in err
    text = logs[0].read_text()
    assert "Traceback" in text and "a bug we did not expect" in text and "def broken" not in err


def test_user_error_exits_1_with_a_message(tmp_path: Path) -> None:
    done = bertstudio("models", "--models-dir", str(tmp_path / "missing"), tmp_path=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 1 and err.startswith("error: Models folder") and "hint:" in err
    assert "Traceback" not in err


@pytest.fixture
def custom_code_models(tmp_path: Path, checkpoint_factory) -> Path:  # noqa: ANN001
    return custom_code_models_dir(tmp_path / "models", checkpoint_factory("bert"))


def test_models_folder_says_why_custom_code_has_no_tasks(custom_code_models: Path, capsys) -> None:  # noqa: ANN001
    from bertstudio.cli import main

    assert main(["models", "--models-dir", str(custom_code_models)]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines()}
    assert "fill-mask" in rows["bert"]
    for name in ("alien", "remote"):
        assert "no tasks: needs custom code" in rows[name] and "never runs" in rows[name]
    assert main(["models", "--models-dir", str(custom_code_models), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {m["name"]: m["problem"] for m in listed}["alien"].startswith("needs custom code")


def test_loading_custom_code_is_refused_with_the_reason(custom_code_models: Path, capsys) -> None:  # noqa: ANN001
    from bertstudio.cli import main

    assert main(["fill-mask", "--model", str(custom_code_models / "alien"), "a [MASK]"]) == 1
    err = capsys.readouterr().err
    assert "needs custom code" in err and "Traceback" not in err, err


def test_an_os_error_is_a_message_not_a_bug(tmp_path: Path) -> None:
    code = """
import sys
import bertstudio.core.catalog as catalog
from bertstudio.cli import main
def full(root):
    raise OSError(28, "No space left on device", "/full/disk/x")
catalog.list_local_models = full
sys.exit(main(["models", "--models-dir", sys.argv[1]]))
"""
    done = bertstudio(str(tmp_path), tmp_path=tmp_path, code=code)
    err = done.stderr.decode()
    assert done.returncode == 1 and err.strip() == "error: No space left on device: /full/disk/x", err
