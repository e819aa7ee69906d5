"""torchrun on the CPU for a new head: two gloo processes train QA through the CLI, each takes its
own batches (steps halve), rank 0 alone writes the model and the result, and validation EM/F1 come
from every window of both ranks (the gathered predictions line up with the encoded rows)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bertstudio.core.training.saving import MARKER

ROOT = Path(__file__).resolve().parents[2]
TORCHRUN = Path(sys.executable).with_name("torchrun")


@pytest.mark.skipif(not TORCHRUN.is_file() and shutil.which("torchrun") is None, reason="torchrun is not installed")
def test_torchrun_two_cpu_processes_train_qa(tmp_path: Path, checkpoint_factory) -> None:  # noqa: ANN001
    from tests.core.test_training_tasks import task_config

    output = tmp_path / "out"
    config = task_config("qa", tmp_path, checkpoint_factory("bert", "Model"), output_dir=str(output))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(ROOT),
           "OMP_NUM_THREADS": "1"}
    command = [str(TORCHRUN if TORCHRUN.is_file() else shutil.which("torchrun")), "--nproc_per_node", "2",
               "--standalone", "-m", "bertstudio", "train", "--task", "qa", "--model", config.model,
               "--train", config.train_file, "--eval", str(config.eval_file), "--output", str(output),
               "--epochs", "1", "--batch-size", "4", "--max-length", "64", "--lr", "1e-3", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    results = [line for line in lines if line["event"] == "result"]
    assert len(results) == 1, done.stdout  # rank 0 alone reports
    plan = next(line for line in lines if line["event"] == "plan")
    result = results[0]
    windows = plan["metrics"]["train_examples"]
    assert result["max_steps"] == -(-windows // 8) and result["step"] == result["max_steps"]  # 2 ranks x 4 rows
    assert {"eval_exact_match", "eval_f1"} <= set(result["metrics"])
    assert 0.0 <= result["metrics"]["eval_f1"] <= 1.0
    assert (output / "model.safetensors").is_file() and (output / MARKER).is_file()
    assert not Path(str(output) + ".lock").exists()
