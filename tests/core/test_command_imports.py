"""Fixed costs (issue 39.3): a whole `classify` or `evaluate` process imports nothing the command does
not use. Each runs in a fresh interpreter and its `sys.modules` is compared with a bare script that
imports transformers and runs the same model: `classify` adds only our own modules (no pipeline
module, no scikit-learn); `evaluate` adds scikit-learn (its metrics and curves are scikit-learn's,
as the results promise) and never datasets, peft, captum, onnx or transformers' pipelines. Not
timed: the set of modules is what decides the cost, and it does not depend on the machine's load."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NEVER = ("datasets", "peft", "captum", "onnx", "onnxruntime", "transformers.pipelines", "PySide6", "pyqtgraph")
DUMP = "import atexit, sys\natexit.register(lambda: open({out!r}, 'w').write(' '.join(sorted(sys.modules))))\n"
OURS = DUMP + "from bertstudio.cli import main\nsys.exit(main({argv!r}))\n"
BARE = DUMP + """import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer
tokenizer = AutoTokenizer.from_pretrained({folder!r})
model = AutoModelForSequenceClassification.from_pretrained({folder!r}).eval()
with torch.inference_mode():
    print(model(**tokenizer(["a text"], return_tensors="pt")).logits.softmax(-1))
"""


def modules_of(scripts: dict[str, str], tmp_path: Path) -> dict[str, set[str]]:
    """Per script, the modules its fresh interpreter holds at exit (the interpreters run side by side)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    children = {name: subprocess.Popen([sys.executable, "-c", script.format(out=str(tmp_path / f"{name}.txt"))],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
                for name, script in scripts.items()}
    for name, child in children.items():
        _, err = child.communicate(timeout=600)
        assert child.returncode == 0, f"{name}: {err[-2000:]}"
    return {name: set((tmp_path / f"{name}.txt").read_text(encoding="utf-8").split()) for name in scripts}


def top_packages(names: set[str]) -> set[str]:
    return {name.split(".")[0] for name in names}


def imported(names: set[str], module: str) -> bool:
    return module in names or any(name.startswith(module + ".") for name in names)


def test_classify_and_evaluate_import_only_what_they_use(checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    folder = str(checkpoint_factory("bert", "SequenceClassification"))
    data = tmp_path / "rows.csv"
    with data.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([("text", "label"), ("a fine film", "positive"), ("dull", "negative")])
    found = modules_of({
        "bare": BARE.replace("{folder!r}", repr(folder)),
        "classify": OURS.replace("{argv!r}", repr(["classify", "--model", folder, "a text"])),
        "evaluate": OURS.replace("{argv!r}", repr(["evaluate", "--model", folder, "--data", str(data)])),
    }, tmp_path)
    bare, classify, evaluate = found["bare"], found["classify"], found["evaluate"]
    added = top_packages(classify - bare) - {"bertstudio", "encodings"}
    assert not added, f"classify imports what the bare script does not: {sorted(added)}"
    for module in NEVER + ("sklearn", "pandas"):
        assert not imported(classify - bare, module), module
    for module in NEVER:
        assert not imported(evaluate - bare, module), module
    assert imported(evaluate, "sklearn.metrics")  # what its metrics are computed with
