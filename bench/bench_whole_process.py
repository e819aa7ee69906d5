"""Fixed costs (issue 39.3): a whole `bertstudio classify "one text"` and `bertstudio evaluate` process
against a bare script that imports transformers and runs the model (one text; the 25-line
length-sorted loop over the same CSV), a fresh process each, twice, alternately. Wall seconds and
CPU seconds (user + system of the child: steadier than wall on a shared machine) are both reported;
the target is ours <= the bare script's.

What ours does on top of the bare stack: the CLI's own modules, the folder checks, the head
report, the metrics (scikit-learn, as the results promise) and the curves; what it does not:
transformers' pipeline module, nothing of datasets, peft, captum or onnx (tests/core/test_command_imports.py).

    BENCH_WHOLE_ROWS=64 python bench/run.py whole_process
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import Row

ROOT = Path(__file__).resolve().parent.parent
RUNS = 2

BARE_ONE = r"""
import sys, json
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer
folder, text, device, dtype = sys.argv[1:5]
tokenizer = AutoTokenizer.from_pretrained(folder)
model = AutoModelForSequenceClassification.from_pretrained(folder, dtype=getattr(torch, dtype)).to(device).eval()
with torch.inference_mode():
    probs = model(**tokenizer([text], return_tensors="pt", truncation=True).to(device)).logits.float().softmax(-1)[0]
print(json.dumps({model.config.id2label[i]: float(p) for i, p in enumerate(probs)}))
"""

BARE_LOOP = r"""
import csv, sys
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer
folder, data, device, dtype = sys.argv[1:5]
with open(data, newline="", encoding="utf-8") as handle:
    table = list(csv.DictReader(handle))
texts = [row["text"] for row in table]
tokenizer = AutoTokenizer.from_pretrained(folder)
model = AutoModelForSequenceClassification.from_pretrained(folder, dtype=getattr(torch, dtype)).to(device).eval()
lengths = [len(ids) for ids in tokenizer(texts, truncation=True)["input_ids"]]
order = sorted(range(len(texts)), key=lambda i: lengths[i])
out = torch.empty(len(texts), dtype=torch.long)
with torch.inference_mode():
    for start in range(0, len(order), 32):
        rows = order[start:start + 32]
        encoded = tokenizer([texts[i] for i in rows], padding=True, truncation=True, return_tensors="pt").to(device)
        out[rows] = model(**encoded).logits.argmax(-1).cpu()
names = model.config.id2label
print(sum(names[int(p)] == row["label"] for p, row in zip(out, table)) / len(table))
"""


def run_once(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one fresh process; a failure stops the bench with its stderr."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:  # an error, not SystemExit: bench/gpu_check.py reports it and runs its next stage
        raise RuntimeError(f"{argv[:4]} failed: {done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def whole_process(folder: Path, data: Path, device: str = "cpu", dtype: str = "float32",
                  runs: int = RUNS) -> dict[str, Any]:
    """Each command and its bare script, `runs` times alternately: {name: [(wall, cpu), ...]}."""
    common = ["--device", device, "--dtype", dtype]
    commands = {
        "classify": ["-m", "bertstudio", "classify", "--model", str(folder), *common, "a fine movie, I loved it"],
        "bare classify": ["-c", BARE_ONE, str(folder), "a fine movie, I loved it", device, dtype],
        "evaluate": ["-m", "bertstudio", "evaluate", "--model", str(folder), "--task", "classify", "--data", str(data),
                     *common],
        "bare sorted loop": ["-c", BARE_LOOP, str(folder), str(data), device, dtype],
    }
    found: dict[str, Any] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            found[name].append(run_once(argv))
    return found


def _rows_of(found: dict[str, Any], what: str) -> list[Row]:
    out = []
    for ours, bare in (("classify", "bare classify"), ("evaluate", "bare sorted loop")):
        walls = " / ".join(f"{w:.1f}" for w, _ in found[ours])
        bare_walls = " / ".join(f"{w:.1f}" for w, _ in found[bare])
        cpu, bare_cpu = min(c for _, c in found[ours]), min(c for _, c in found[bare])
        out.append(Row(f"whole process {ours} {what}", min(w for w, _ in found[ours]), min(w for w, _ in found[bare]),
                       f"wall {walls} s vs {bare} {bare_walls} s; CPU {cpu:.1f} s vs {bare_cpu:.1f} s "
                       f"({cpu / bare_cpu:.2f}x); target <= 1.00x"))
    return out


def rows() -> list[Row]:
    from bench_engine import _write, review_texts
    from bench_onnx_runtime import minilm_classifier

    count = int(os.environ.get("BENCH_WHOLE_ROWS", "64"))
    data = _write(review_texts(count), ("negative", "positive"))
    return _rows_of(whole_process(minilm_classifier(), data), f"MiniLM classifier, {count} review rows, CPU")


if __name__ == "__main__":
    for row in rows():
        print(f"{row.name}: {row.note}")
