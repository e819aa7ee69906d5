"""Closing the window while work runs.

Each case runs the real app in a subprocess and measures from the close to the process exit:
code 0, within a few seconds, nothing on stderr but expected lines (no traceback, no Qt thread
warning, no "Signal source has been deleted"), and a training run is saved, not lost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.faults.blackhole import blackhole_server

PRELUDE = """
import sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from bertstudio.app import exit_now, install_excepthook
from bertstudio.ui.main_window import MainWindow
from bertstudio.workers.runner import configure_pool, shutdown
app = QApplication([])
configure_pool()
window = MainWindow(confirm_close=False)
install_excepthook(window)
def close():
    print("closing at", time.time(), flush=True)
    window.close()
"""
EPILOGUE = """
window.show()
code = app.exec()
print("drained", shutdown(1000), flush=True)
exit_now(code, window.settings)  # as bertstudio.app.run_app ends
"""
UNEXPECTED = ("Traceback", "Signal source", "QThread", "internal error", "Error calling Python override")


def run_app(script: str, *args: str, env_extra: dict[str, str] | None = None, timeout: int = 150) -> tuple[
        subprocess.CompletedProcess, float]:
    """Returns the finished process and the seconds from its close() to its exit."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1", **(env_extra or {})}
    env["XDG_STATE_HOME"] = str(Path(env["XDG_CONFIG_HOME"]) / "state")  # crash logs, if any, stay in tmp
    done = subprocess.run([sys.executable, "-c", PRELUDE + script + EPILOGUE, *args], capture_output=True,
                          text=True, timeout=timeout, env=env)
    ended = time.time()
    closed = [float(line.split()[-1]) for line in done.stdout.splitlines() if line.startswith("closing at")]
    assert closed, f"the script never closed the window:\n{done.stdout}\n{done.stderr}"
    print(f"close -> exit: {ended - closed[0]:.2f} s")
    return done, ended - closed[0]


EXPECTED = ("This plugin does not support propagateSizeHints()",)  # Qt's offscreen platform says this


def assert_clean(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, done.stderr
    assert "drained True" in done.stdout, done.stdout
    bad = [line for line in done.stderr.splitlines() if any(word in line for word in UNEXPECTED)]
    assert not bad, done.stderr
    other = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith(EXPECTED)]
    assert not other, f"unexpected lines on stderr:\n{done.stderr}"


def test_close_while_a_model_loads_and_predicts(real_models, tmp_path: Path) -> None:
    script = """
tab = window.task_tabs["fill-mask"]
def go():
    tab.model_bar.load(sys.argv[1])
    tab.text.setPlainText("C C ( = [MASK] ) O")
    tab.model_bar.loaded.connect(lambda _i: (tab.run(), QTimer.singleShot(0, close)))
window.ready.connect(go)
"""
    done, seconds = run_app(script, str(real_models["rxnmapper-albert-smiles-mlm"]),
                            env_extra={"XDG_CONFIG_HOME": str(tmp_path)})
    assert_clean(done)
    assert seconds < 5, f"exit took {seconds:.1f} s after the close"


def test_close_while_the_hub_never_answers(tmp_path: Path) -> None:
    """The stalled network of item 2: the window closes at once, the process ends in seconds."""
    script = """
tab = window.task_tabs["fill-mask"]
def go():
    tab.model_bar.load("nobody/never-answers")
    QTimer.singleShot(1500, close)  # well inside the stall (the Hub limit is 10 s)
window.ready.connect(go)
"""
    with blackhole_server() as url:
        env = {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": url, "HF_HOME": str(tmp_path / "hf"),
               "XDG_CONFIG_HOME": str(tmp_path)}
        done, seconds = run_app(script, env_extra=env)
    assert_clean(done)
    assert seconds < 3, f"exit took {seconds:.1f} s after the close"


def test_close_during_training_saves_the_run(checkpoint_factory, tmp_path: Path) -> None:
    script = """
from bertstudio.core.training.events import TrainingEvent
def go():
    tab = window.task_tabs["pretraining"]  # the tabs after the first exist once the window is shown
    tab.task.setCurrentIndex(tab.task.findData("text-classification"))
    tab.base_model.setText(sys.argv[1])
    tab.use_demo_data()
    tab.output_dir.setText(sys.argv[2])
    tab.max_steps.setValue(5000)
    tab.batch_size.setValue(4)
    tab.max_length.setValue(32)
    def on_progress(event):
        payload = event.payload
        if isinstance(payload, TrainingEvent) and payload.kind == "step" and payload.step >= 3 and not fired:
            fired.append(1)
            QTimer.singleShot(0, close)
    tab.runner.progress.connect(on_progress)
    tab.start()
fired = []
window.ready.connect(go)
"""
    output = tmp_path / "run"
    done, seconds = run_app(script, str(checkpoint_factory("bert", "SequenceClassification")), str(output),
                            env_extra={"XDG_CONFIG_HOME": str(tmp_path)})
    assert_clean(done)
    assert seconds < 30, f"stopping and saving took {seconds:.1f} s after the close"
    assert (output / "config.json").is_file() and any(output.glob("*.safetensors")), sorted(output.iterdir())
    metrics = json.loads((output / "metrics.json").read_text())
    assert metrics, "the saved run has no metrics"
