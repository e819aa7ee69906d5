"""The fuzz harness can fail: each of its judgements is shown to catch what it is there for."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fuzz import harness
from tests.fuzz.test_cli_fuzz import disk_problems


@pytest.mark.parametrize(("code", "err", "expected"), [
    (1, "error: The data file 'x' does not exist.\nhint: Choose an existing file.\n", []),
    (0, "warning: no trained head\n", []),
    (2, "usage: bertstudio train [-h]\nbertstudio train: error: argument --lr: invalid float value: 'x'\n", []),
    (2, "internal error: ValueError: boom (details in /tmp/c.log; please report it)\n", ["exit 2", "internal error"]),
    (1, "Traceback (most recent call last):\n  File \"x\"\nValueError: boom\nerror: boom\n", ["traceback"]),
    (1, "error: one\nerror: two\n", ["2 error lines"]),
    (1, "error: out of memory (try a smaller model, batch or input)\n", ["out of memory"]),
    (130, "Cancelled.\n", ["exit 130"]),
    ("hang", "", [f"hang: no end within {harness.CASE_SECONDS:.0f} s"]),
])
def test_problems_follow_the_clis_contract(code: int | str, err: str, expected: list[str]) -> None:
    assert harness.problems(harness.Outcome(["x"], code, "", err)) == expected


def test_a_case_past_its_time_is_stopped() -> None:
    with pytest.raises(harness.CaseTimeout), harness.time_limit(0.2):
        while True:
            pass


def test_an_allocation_past_the_memory_limit_is_a_memory_error() -> None:
    with pytest.raises(MemoryError), harness.memory_limit(256 << 20):
        bytearray(1 << 30)
    assert len(bytearray(300 << 20)) == 300 << 20  # the limit is lifted after the case


def test_the_snapshot_sees_content_links_and_new_files(tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    data.write_text("abc", encoding="utf-8")
    (tmp_path / "link").symlink_to(data)
    before = harness.snapshot(tmp_path)
    data.write_text("abd", encoding="utf-8")  # same size
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to(tmp_path)
    (tmp_path / "new").mkdir()
    touched = tmp_path / "touched"
    touched.write_text("same", encoding="utf-8")
    before[str(touched)] = harness.snapshot(tmp_path)[str(touched)]
    os.utime(touched, ns=(1, 1))  # same bytes, another mtime
    assert harness.changes(before, harness.snapshot(tmp_path)) == [
        f"changed {data}", f"changed {tmp_path / 'link'}", f"changed {touched}", f"created {tmp_path / 'new'}"]


def test_only_declared_outputs_may_change_and_only_when_asked(tmp_path: Path) -> None:
    out = tmp_path / "out"
    before = {str(tmp_path / "data.csv"): ("file", 3, "1:a")}
    after = {**before, str(out): ("dir", 0, ""), str(out / "model.safetensors"): ("file", 9, "2:b")}
    argv = ["train", "--output", str(out)]
    assert disk_problems(argv, before, after) == [f"disk: created {out}", f"disk: created {out / 'model.safetensors'}"]
    assert disk_problems([*argv, "--overwrite"], before, after) == []
    changed = {str(tmp_path / "data.csv"): ("file", 3, "2:c")}
    assert disk_problems([*argv, "--overwrite"], before, changed) == [f"disk: changed {tmp_path / 'data.csv'}"]


@pytest.mark.parametrize(("out", "valid"), [
    ('{"a": 1}\n', True), ('{"step": 1}\n{"step": 2}\n', True), ('[{"d": Infinity}]', False),
    ('{"a": NaN}\n{"b": 1}\n', False), ("Loaded.\n{}", False), ("", False)])
def test_json_output_must_be_strict_json_or_json_lines(out: str, valid: bool) -> None:
    found = harness.problems(harness.Outcome(["runs", "--json"], 0, out, ""))
    assert found == ([] if valid else ["invalid JSON on stdout"])
