"""A Hub that accepts connections and never answers: bounded, named, cancellable (issue 10 item 2).

The server (tests/faults/blackhole.py) listens on 127.0.0.1; HF_HUB_OFFLINE is unset inside
these tests only, and the Hugging Face cache points at an empty folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bertstudio.core import hub
from bertstudio.core.errors import OfflineError
from bertstudio.core.progress import TaskControl
from tests.conftest import assert_cancel_ends_the_wait
from tests.faults.blackhole import blackhole_server, point_hub_at

MODEL = "nobody/never-answers"


@pytest.fixture
def stalled_hub(monkeypatch, tmp_path):  # noqa: ANN001, ANN201
    """This process talks to a black-hole Hub: online as far as every library can tell."""
    with blackhole_server() as url:
        point_hub_at(url, monkeypatch, str(tmp_path / "hub-cache"))
        yield url


def test_a_silent_hub_fails_in_seconds_naming_the_model(stalled_hub, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv(hub.TIMEOUT_ENV, "1.5")
    start = time.monotonic()
    with pytest.raises(OfflineError) as caught:
        hub.hub_folder(MODEL, TaskControl())
    assert time.monotonic() - start < 5
    assert MODEL in caught.value.message and "did not answer" in caught.value.message
    assert "local model folder" in caught.value.hint


def test_cancel_ends_the_wait_at_once(stalled_hub) -> None:  # noqa: ANN001
    assert_cancel_ends_the_wait(lambda control: hub.hub_folder(MODEL, control), stop_after=0.3, within=1.5)


def test_a_local_folder_loads_with_a_silent_hub(stalled_hub, checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.models import LoadRequest, load_uncached

    folder = str(checkpoint_factory("bert"))  # built (and transformers imported) before the clock starts
    start = time.monotonic()
    loaded = load_uncached(LoadRequest(folder, "fill-mask"))
    assert loaded.info.architecture.endswith("ForMaskedLM")
    assert time.monotonic() - start < 8, "loading a local folder waited for the Hub"


def test_cli_fails_within_twenty_seconds_with_one_line(tmp_path: Path) -> None:
    """The real thing, default timeouts: a process that reads HF_ENDPOINT at import."""
    with blackhole_server() as url:
        env = {k: v for k, v in os.environ.items() if k not in {"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"}}
        env.update(HF_ENDPOINT=url, HF_HOME=str(tmp_path / "hf"), XDG_STATE_HOME=str(tmp_path / "state"))
        env.pop("BERTSTUDIO_HUB_TIMEOUT", None)
        start = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "bertstudio", "fill-mask", "--model", MODEL, "a [MASK] b"],
                              capture_output=True, text=True, timeout=60, env=env)
        elapsed = time.monotonic() - start
    assert done.returncode == 1, done.stderr
    assert elapsed < 20, f"took {elapsed:.1f} s"
    assert MODEL in done.stderr and "did not answer" in done.stderr
    assert "Traceback" not in done.stderr
