"""Issue 40, valid JSON everywhere: one writer (core.json_values.dumps) with allow_nan=False, a
non-finite value written as null with a note; `runs` and `runs --json` on a record holding Infinity
exit 0 with valid JSON; a run record written with an infinite loss is valid JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bertstudio.core.json_values import dumps
from bertstudio.core.runs import index
from tests.conftest import run_cli


def _strict(text: str) -> object:
    """JSON as other languages read it: NaN and Infinity are no JSON."""
    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_numbers_become_null_with_a_note() -> None:
    value = {"metrics": {"eval_loss": float("inf"), "eval_accuracy": 0.5}, "curve": [1.0, float("nan")],
             "notes": ["kept"]}
    written = _strict(dumps(value))
    assert written["metrics"] == {"eval_loss": None, "eval_accuracy": 0.5} and written["curve"] == [1.0, None]
    assert written["notes"][0] == "kept" and "metrics.eval_loss was inf" in written["notes"][1]
    assert "curve[1] was nan" in written["notes"][1]
    assert _strict(dumps([float("-inf")])) == [None]
    assert dumps({"a": 1}) == json.dumps({"a": 1})


def _record(folder: Path, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "20261126-100000-aaaa0001.json").write_text(text, encoding="utf-8")


RECORD = ('{"id": "20261126-100000-aaaa0001", "task": "classification", "status": "finished", "started": '
          '"2026-11-26T10:00:00", "duration_seconds": DURATION, "device": "cpu", "output_dir": "/out", "model": "m", '
          '"data": "", "config": {"learning_rate": Infinity}, "metrics": {"eval_loss": Infinity, "train_loss": NaN}, '
          '"step": 3, "max_steps": 3, "open_in": [], "error": ""}')


def test_runs_on_a_record_with_infinity_exit_0_with_valid_json(tmp_path: Path, capfd) -> None:  # noqa: ANN001
    _record(tmp_path, RECORD.replace("DURATION", "12"))
    listed = run_cli(capfd, "runs", "--runs-dir", str(tmp_path), "--json")
    assert listed.returncode == 0, listed.stderr
    (run,) = _strict(listed.stdout)
    assert run["metrics"]["eval_loss"] is None and run["config"]["learning_rate"] is None
    shown = run_cli(capfd, "runs", "--runs-dir", str(tmp_path))
    assert shown.returncode == 0 and "20261126-100000-aaaa0001" in shown.stdout, shown.stderr


@pytest.mark.parametrize("duration", ["Infinity", "NaN", "1e400"])
def test_a_record_with_an_infinite_duration_is_skipped_not_a_crash(tmp_path: Path, capfd, duration: str) -> None:  # noqa: ANN001
    _record(tmp_path, RECORD.replace("DURATION", duration))
    for extra in ((), ("--json",)):
        listed = run_cli(capfd, "runs", "--runs-dir", str(tmp_path), *extra)
        assert listed.returncode == 0 and "internal error" not in listed.stderr, listed.stderr


def test_a_run_record_with_an_infinite_loss_is_written_as_valid_json(tmp_path: Path) -> None:
    record = index.RunRecord(id="20261126-100000-aaaa0001", task="classification", status="failed",
                             started="2026-11-26T10:00:00", duration_seconds=3.0, device="cpu", output_dir="/out",
                             model="m", data="", metrics={"train_loss": float("inf")}, error="The loss diverged.")
    path = index.write_record(record, tmp_path)
    assert _strict(path.read_text(encoding="utf-8"))["metrics"]["train_loss"] is None
    assert index.read_record(path) is not None
