"""Ctrl+C always stops the CLI within a second or two, with "Cancelled." and exit 130 (no
traceback), and no count a user types can start work that nothing can stop: Integrated
Gradients steps are bounded (captum computes its quadrature nodes before the first forward
pass, where neither Cancel nor Ctrl+C reaches: 10,000 steps took tens of minutes there)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bertstudio.cli import main
from bertstudio.core.errors import InputError
from bertstudio.core.explain.attribution import check_steps, converge_steps
from bertstudio.core.limits import MAX_IG_STEPS

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize("steps", ["10000", "1025", "0", "-3", "²", "1e3", "12.5", "99999999999999999999999"])
def test_explain_steps_out_of_bounds_are_refused_before_loading(capsys: pytest.CaptureFixture[str],
                                                                steps: str) -> None:
    started = time.monotonic()
    code = main(["explain", "--model", "/nonexistent/model", "--task", "classify", "--steps", steps, "a text"])
    err = capsys.readouterr().err
    assert code == 1 and "Integrated Gradients steps (--steps)" in err and "Traceback" not in err, err
    assert "/nonexistent" not in err  # refused before the model was looked at
    assert time.monotonic() - started < 5
    if steps.lstrip("-").isascii() and steps.lstrip("-").isdigit():
        assert f"between 1 and {MAX_IG_STEPS:,}" in err


def test_steps_bound_and_converge_doubling_share_one_limit() -> None:
    assert check_steps(MAX_IG_STEPS) == MAX_IG_STEPS and check_steps("64") == 64
    with pytest.raises(InputError, match=f"{MAX_IG_STEPS:,}"):
        check_steps(MAX_IG_STEPS + 1)
    assert converge_steps(50) == [50, 100, 200, 400]
    assert converge_steps(300) == [300, 600] and converge_steps(MAX_IG_STEPS) == [MAX_IG_STEPS]
    assert max(max(converge_steps(n)) for n in range(1, MAX_IG_STEPS + 1)) == MAX_IG_STEPS


def test_prune_count_is_a_whole_number(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["head-importance", "--model", "/nonexistent/model", "--task", "classify", "--prune", "²", "a"])
    err = capsys.readouterr().err
    assert code == 1 and "--prune must be a whole number" in err and "Traceback" not in err, err


# The CLI's own main in a real process; one line on stderr once IG is past its quadrature nodes
# and its first scaled batch has started, so the signal lands in the middle of the work.
WATCHED = """
import sys
from bertstudio.core import progress
report = progress.TaskControl.report
def watched(self, message, fraction=None, payload=None):
    if message.startswith("Integrated Gradients") and " pass 4 of " in message:
        print("IG-RUNNING", file=sys.stderr, flush=True)
    report(self, message, fraction, payload)
progress.TaskControl.report = watched
from bertstudio.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def test_ctrl_c_stops_a_long_explain_within_two_seconds(real_models: dict[str, Path]) -> None:
    model = real_models["categorium-bert-tiny-topics-en"]  # 2 layers, 32 wide: a tiny real checkpoint
    words = "market stock price bank loan game team music film health doctor court law city news".split()
    text = " ".join(random.Random(1).choice(words) for _ in range(500))  # 500 tokens: 256 batches of 4 steps
    command = [sys.executable, "-c", WATCHED, "explain", "--model", str(model), "--task", "classify",
               "--steps", str(MAX_IG_STEPS), text, "--json"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT)
    assert process.stderr is not None
    seen = []
    for line in process.stderr:
        seen.append(line)
        if line.strip() == "IG-RUNNING":
            break
    assert seen and seen[-1].strip() == "IG-RUNNING", "".join(seen)
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    said = process.stderr.readline()
    stopped = time.monotonic() - sent  # the work stopped and the CLI said so
    out, err = process.communicate(timeout=60)
    exited = time.monotonic() - sent  # plus the interpreter's own teardown of torch (about 1 s, more under load)
    assert said.strip() == "Cancelled." and process.returncode == 130, said + err
    assert "Traceback" not in err and err.strip() == "", err
    assert out == ""  # no half result on stdout
    assert stopped < 2.0, f"Ctrl+C took {stopped:.1f} s to stop the run"
    assert exited < 10.0, f"the process took {exited:.1f} s to exit after Ctrl+C"
