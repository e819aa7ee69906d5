"""The run lock and the run marker are read by one validating reader each: whatever a lock file
holds (empty after a full disk, hand-edited, binary, a pid too large for the OS), a lock no
running process holds is taken over with a note, a live one refuses the second run, and a
marker that is not exactly ours never makes a user's folder replaceable."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bertstudio.cli import main
from bertstudio.core.errors import InputError
from bertstudio.core.outputs import folder_lock as run_lock
from bertstudio.core.outputs import lock_path
from bertstudio.core.training.locks import LockInfo, parse_lock, process_start
from bertstudio.core.training.saving import MARKER, is_ours, read_marker, write_marker
from tests.core.test_training import toy_csv

ROOT = Path(__file__).resolve().parents[2]
HOST = socket.gethostname()

BAD_RECORDS = [
    b"", b" ", b"\x00\x01\xff\xfe binary", b"not json", b"[1,2]", b"null", b"42", b'"pid"', b"{}",
    b'{"pid": "abc", "host": "h"}', b'{"pid": 123}', b'{"pid": 12345678901234567890, "host": "h"}',
    b'{"pid": -5, "host": "h"}', b'{"pid": 0, "host": "h"}', b'{"pid": true, "host": "h"}',
    b'{"pid": 1.5, "host": "h"}', b'{"pid": [1], "host": "h"}', b'{"pid": 1, "host": ["h"]}',
    b'{"pid": 1, "host": ""}', b'{"pid": 1, "host": {"name": "h"}}', b'{"lock": {"pid": 1, "host": "h"}}',
    b"[" * 5000, b'{"pid": 1' + b"0" * 5000 + b', "host": "h"}', b'{"pid": 1, "host": "' + b"h" * 300 + b'"}',
    json.dumps({"pid": 1, "host": "h", "pad": "x" * 5000}).encode(),
]


@pytest.mark.parametrize("raw", BAD_RECORDS, ids=range(len(BAD_RECORDS)))
def test_parse_lock_refuses_everything_but_a_record(raw: bytes) -> None:
    assert parse_lock(raw) is None


def test_parse_lock_reads_a_record_and_drops_bad_optional_fields() -> None:
    info = parse_lock(json.dumps({"pid": 42, "host": "h", "task": ["x"], "started": 5, "since": "1"}).encode())
    assert info == LockInfo(42, "h", "", "", None)
    full = parse_lock(json.dumps({"pid": 42, "host": "h", "task": "ner", "started": "10:00", "since": 7}).encode())
    assert full == LockInfo(42, "h", "ner", "10:00", 7)


@pytest.mark.parametrize("raw", BAD_RECORDS, ids=range(len(BAD_RECORDS)))
def test_unreadable_lock_is_stale_and_taken_over(tmp_path: Path, raw: bytes) -> None:
    output = tmp_path / "out"
    lock_path(output).write_bytes(raw)
    with run_lock(output, "text-classification") as held:
        assert "stale lock" in held.note and str(output) in held.note
        assert parse_lock(lock_path(output).read_bytes()).pid == os.getpid()  # type: ignore[union-attr]
    assert not lock_path(output).exists()


def test_lock_of_a_gone_process_is_stale(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    output = tmp_path / "out"
    lock_path(output).write_text(json.dumps({"pid": int(gone.stdout), "host": HOST, "started": "10:00"}))
    with run_lock(output, "ner") as held:
        assert f"process {int(gone.stdout)} on {HOST}" in held.note and "is gone" in held.note


def test_reused_pid_is_told_apart_by_its_start_time(tmp_path: Path) -> None:
    output = tmp_path / "out"
    mine = process_start(os.getpid())
    if mine is None:
        pytest.skip("no /proc/PID/stat on this system: a reused pid cannot be told apart")
    lock_path(output).write_text(json.dumps({"pid": os.getpid(), "host": HOST, "since": mine + 1}))
    with run_lock(output, "ner") as held:  # same pid, another process (the pid was reused)
        assert "stale lock" in held.note
    lock_path(output).write_text(json.dumps({"pid": os.getpid(), "host": HOST, "since": mine}))
    with pytest.raises(InputError, match=f"process {os.getpid()}"):  # that very process: still running
        run_lock(output, "ner").__enter__()
    lock_path(output).write_text(json.dumps({"pid": 1, "host": "elsewhere.example", "started": "9:00"}))
    with pytest.raises(InputError, match="on elsewhere.example") as refused:  # cannot be checked: respected
        run_lock(output, "ner").__enter__()
    assert "delete the lock file" in refused.value.hint


HOLDER = """
import sys, time
from pathlib import Path
from bertstudio.core.outputs import folder_lock as run_lock
from bertstudio.core.outputs import lock_path
with run_lock(Path(sys.argv[1]), "ner"):
    print("held", flush=True)
    time.sleep(600)
"""


def test_live_holder_refuses_and_its_kill_9_frees_the_lock(tmp_path: Path) -> None:
    output = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(output)], stdout=subprocess.PIPE, text=True,
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(InputError, match=f"Another run is writing to '{output}' \\(process {holder.pid} "):
            run_lock(output, "ner").__enter__()
        lock_path(output).write_bytes(b"")  # even emptied by hand: its flock says it is held
        with pytest.raises(InputError, match="Another run is writing"):
            run_lock(output, "ner").__enter__()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    with run_lock(output, "ner") as held:  # the kernel dropped the dead holder's flock
        assert "stale lock" in held.note
    assert not lock_path(output).exists()


def test_racing_takeovers_let_exactly_one_run_in(tmp_path: Path) -> None:
    output = tmp_path / "out"
    lock_path(output).write_bytes(b"")  # a stale lock every racer sees at once
    barrier, done = threading.Barrier(8), threading.Event()
    won: list[int] = []
    refused: list[int] = []

    def race(index: int) -> None:
        barrier.wait()
        try:
            with run_lock(output, "ner"):
                won.append(index)
                done.wait(10)
        except InputError:
            refused.append(index)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 20
    while len(refused) < 7 and time.monotonic() < deadline:  # a second winner would leave 6 refused
        time.sleep(0.01)
    done.set()
    for thread in threads:
        thread.join(10)
    assert len(won) == 1 and len(refused) == 7


def test_symlink_at_the_lock_is_never_followed(tmp_path: Path) -> None:
    output, victim = tmp_path / "out", tmp_path / "victim.txt"
    victim.write_text("keep", encoding="utf-8")
    lock_path(output).symlink_to(victim)
    with pytest.raises(InputError, match="symbolic link"):
        run_lock(output, "ner").__enter__()
    assert victim.read_text(encoding="utf-8") == "keep"


def test_empty_lock_left_by_a_failed_run_does_not_block_training(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  checkpoint_factory) -> None:  # noqa: ANN001
    output = tmp_path / "out"
    lock_path(output).write_bytes(b"")  # what a run that hit a full disk used to leave
    code = main(["train", "--task", "text-classification", "--model", str(checkpoint_factory("bert", "Model")),
                 "--train", str(toy_csv(tmp_path / "toy.csv", 16)), "--output", str(output), "--max-steps", "2",
                 "--batch-size", "8", "--max-length", "16", "--eval-share", "0"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "A stale lock on" in err and "it was empty" in err and "Traceback" not in err
    assert (output / "model.safetensors").is_file() and not lock_path(output).exists()


# -- the run marker --------------------------------------------------------------------------------
BAD_MARKERS = [
    b"", b"\x00\xff binary", b"not json", b"[1,2]", b"null", b'"bertstudio"', b"{}",
    b'{"app": "other", "kind": "model", "task": "ner"}', b'{"app": "bertstudio"}',
    b'{"app": "bertstudio", "kind": 1, "task": "ner"}', b'{"app": "bertstudio", "kind": "model", "task": null}',
    b'{"app": "bertstudio", "kind": "", "task": "ner"}', b'{"app": ["bertstudio"], "kind": "model", "task": "n"}',
    b'{"run": {"app": "bertstudio", "kind": "model", "task": "ner"}}', b"[" * 5000,
    json.dumps({"app": "bertstudio", "kind": "model", "task": "ner", "pad": "x" * 5000}).encode(),
    json.dumps({"app": "bertstudio", "kind": "model", "task": "n" * 101}).encode(),
]


@pytest.mark.parametrize("raw", BAD_MARKERS, ids=range(len(BAD_MARKERS)))
def test_a_marker_that_is_not_exactly_ours_makes_no_folder_ours(tmp_path: Path, raw: bytes,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "thesis"
    folder.mkdir()
    (folder / MARKER).write_bytes(raw)
    (folder / "chapter1.txt").write_text("years of work", encoding="utf-8")
    assert read_marker(folder) is None and not is_ours(folder)
    code = main(["train", "--task", "text-classification", "--model", "/nonexistent/m", "--train",
                 str(toy_csv(tmp_path / "toy.csv", 16)), "--output", str(folder), "--overwrite"])
    assert code == 1 and "not a BERT Studio model folder" in capsys.readouterr().err
    assert (folder / "chapter1.txt").read_text(encoding="utf-8") == "years of work"


def test_marker_folder_or_link_is_not_ours(tmp_path: Path) -> None:
    real = tmp_path / "real"
    write_marker(real, "model", "ner")
    assert read_marker(real) == {"app": "bertstudio", "kind": "model", "task": "ner",
                                 "created": read_marker(real)["created"]}  # type: ignore[index]
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / MARKER).symlink_to(real / MARKER)
    as_folder = tmp_path / "as-folder"
    (as_folder / MARKER).mkdir(parents=True)
    assert not is_ours(linked) and not is_ours(as_folder)
    assert sorted(p.name for p in real.iterdir()) == [MARKER]  # written by rename: no temporary left
