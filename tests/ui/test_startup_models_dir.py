"""Start-up with a models folder (issue 19.1): the list is filled and no error is reported.

The race only exists in a fresh interpreter (transformers not yet imported): the start-up
import in one worker and the folder scan in another made `from transformers import
CONFIG_MAPPING` fail with ImportError. So the window is started in a subprocess, as
`bertstudio --models-dir DIR` starts it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = r"""
import json, os, sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

app = QApplication(sys.argv[:1])
from bertstudio.ui.main_window import MainWindow
from bertstudio.ui.settings import AppSettings
from bertstudio.workers.runner import configure_pool, shutdown

configure_pool()
window = MainWindow(AppSettings(models_dir_override=sys.argv[1]), confirm_close=False)
errors, result = [], {}
report = window.report_error

def spy(error, context=""):
    errors.append(f"{context}: {type(error).__name__}: {error}")
    report(error, context)

window.report_error = spy

waiting = {"scan", "load", "plan"}  # every worker that starts with the window and needs transformers

def done(what):
    waiting.discard(what)
    if not waiting:
        finish()

def finish():
    window.close()  # the close guard may only hide it while a job ends: quit once it is gone
    poll = QTimer(app)
    poll.timeout.connect(lambda: app.quit() if not window.isVisible() else None)
    poll.start(100)

def listed(models):
    result["models"] = sorted(model.name for model in models)
    result["in_model_bar"] = window.task_tabs["fill-mask"].model_bar.source.count()
    done("scan")

def loaded(info):
    result["loaded"] = info.request.source
    done("load")

def planned(preview):
    result["plan"] = window.task_tabs["pretraining"].plan_label.text()
    done("plan")

def watch():  # the other tabs exist once the window has been shown
    fill, train = window.task_tabs["fill-mask"], window.task_tabs["pretraining"]
    fill.model_bar.loaded.connect(loaded)
    fill.model_bar.failed.connect(lambda _error: done("load"))
    train.plan_runner.result.connect(planned)
    train.plan_runner.error.connect(lambda error: (errors.append(f"plan: {error!r}"), done("plan")))

window.models_index.changed.connect(listed)
window.models_index.failed.connect(lambda _error: done("scan"))
window.shown.connect(lambda: QTimer.singleShot(0, lambda: QTimer.singleShot(0, watch)))  # after _finish_start
QTimer.singleShot(150_000, lambda: (errors.append(f"timeout waiting for {sorted(waiting)}"), finish()))
window.show()
app.exec()
shutdown(5_000)
print("RESULT " + json.dumps({"errors": errors, **result}), flush=True)
os._exit(0)
"""


def test_the_models_folder_is_listed_at_start_without_an_error(real_models: dict[str, Path], tmp_path: Path) -> None:
    """With a last workspace that loads a model and plans a training run: three workers at start."""
    folder = real_models["all-minilm-l6-v2"].parent
    model = str(real_models["rxnmapper-albert-smiles-mlm"])
    corpus = Path(__file__).parents[2] / "resources" / "datasets" / "reviews_train.csv"
    last = {"format": "bertstudio-workspace", "version": 1, "current": "fill-mask",
            "tabs": {"fill-mask": {"model": model, "loaded": model},
                     "pretraining": {"view": {"train_file": str(corpus)}}}}  # the Train tab: plans a run
    (tmp_path / "config" / "BERT Studio").mkdir(parents=True)
    (tmp_path / "config" / "BERT Studio" / "last-workspace.json").write_text(json.dumps(last), encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1",
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(tmp_path / "state")}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(folder)], capture_output=True, text=True,
                          timeout=240, env=env, cwd=Path(__file__).parents[2])
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stdout + done.stderr
    result = json.loads(lines[-1].removeprefix("RESULT "))
    assert result["errors"] == []
    assert result["models"] == sorted(path.name for path in real_models.values())
    assert result["in_model_bar"] >= len(real_models)
    assert result["loaded"] == model
    assert "steps" in result["plan"]
    assert "Traceback" not in done.stderr
