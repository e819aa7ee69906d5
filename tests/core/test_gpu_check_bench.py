"""bench/gpu_check.py's target rows of issue 39 run on the CPU at a tiny size (what a lent GPU runs at
full size): a first pass against a warm one, in-process evaluate with its dense TFLOP/s against the
pipeline and the sorted loop, the engine's GPU constants (each setting in a fresh process) and
`--runtime onnx` (float32 and int8); each row names its target."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_gpu_check_reports_each_target_row_on_the_cpu(tmp_path: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "BERTSTUDIO_BENCH_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_check.py"), "--device", "cpu", "--dtypes",
                           "float32", "--quick", "--rows", "4", "--skip", "tiny,speed,trainer,train,whole",
                           "--out", str(tmp_path)], capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    checks = {row["check"]: row for row in json.loads((tmp_path / "gpu_check.json").read_text(encoding="utf-8"))}
    first = checks["first pass vs warm, evaluate MiniLM 4 rows cpu float32"]
    engine = checks["engine evaluate MiniLM 4 review rows cpu float32"]
    onnx = checks["evaluate --runtime onnx MiniLM 4 rows cpu"]
    assert first["first_over_warm"] > 0 and engine["dense_tflops"] > 0 and engine["score_gap"] < 1e-4
    assert onnx["same_top1"] == 1.0 and onnx["probability_gap"] <= 1e-3
    assert "evaluate --runtime onnx int8 MiniLM 4 rows cpu" in checks
    tune = [row for name, row in checks.items() if name.startswith("tune ")]
    assert len(tune) == 5 and all(row["ok"] and row["warm_rows_s"] > 0 for row in tune), tune
    # --overlap 0 took effect (every evaluate tokenized first); the engine's setting overlapped
    assert [row["tokenized_first_runs"] > 0 for row in tune] == [True, True, True, True, False]
    assert all(row["shapes"] >= 1 for row in tune)
    assert set(tune[-1]["budget_rows_s"]) == {"8192", "16384", "32768", "65536"}
    assert all(row["attention_kernels"].get("flash", [0])[0] > 0 for row in tune)  # the CPU's sdpa kernel
    for row in (first, engine, onnx, *tune):
        assert row["target"].startswith(("met:", "missed:")), row
