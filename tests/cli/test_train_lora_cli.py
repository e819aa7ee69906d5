"""`train --lora RANK` writes peft's adapter folder that every command loads; `train --merge ADAPTER_DIR
--output DIR` writes a plain model giving the same predictions; bad input is one line, exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bertstudio.core.runs import index
from tests.conftest import run_cli
from tests.core.test_training import toy_csv


def test_lora_train_classify_and_merge(tmp_path: Path, checkpoint_factory, capfd, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv(index.RUNS_DIR_ENV, str(tmp_path / "index"))
    adapter = tmp_path / "adapter"
    trained = run_cli(capfd, "train", "--model", str(checkpoint_factory("bert", "Model")), "--task", "classify",
                      "--train", str(toy_csv(tmp_path / "toy.csv", 24)), "--output", str(adapter), "--max-steps", "3",
                      "--batch-size", "8", "--max-length", "16", "--lora", "4", "--lora-alpha", "8",
                      "--lora-dropout", "0", "--lora-targets", "query,key,value", "--json")
    assert trained.returncode == 0, trained.stderr
    plan = json.loads(next(line for line in trained.stdout.splitlines() if '"plan"' in line))
    assert "LoRA rank 4:" in plan["message"] and "parameters train" in plan["message"]
    written = json.loads((adapter / "adapter_config.json").read_text())
    assert written["r"] == 4 and written["lora_alpha"] == 8 and written["target_modules"].endswith("(query|key|value)")
    assert written["modules_to_save"] == ["classifier"]

    before = run_cli(capfd, "classify", "--model", str(adapter), "the cat is good", "--json")
    assert before.returncode == 0, before.stderr
    merged = run_cli(capfd, "train", "--merge", str(adapter), "--output", str(tmp_path / "merged"), "--json")
    assert merged.returncode == 0, merged.stderr
    assert json.loads(merged.stdout.splitlines()[-1])["output_dir"] == str((tmp_path / "merged").resolve())
    after = run_cli(capfd, "classify", "--model", str(tmp_path / "merged"), "the cat is good", "--json")
    scores = {row["label"]: row["score"] for row in json.loads(before.stdout)}
    assert scores == pytest.approx({row["label"]: row["score"] for row in json.loads(after.stdout)}, abs=1e-4)


@pytest.mark.parametrize(("args", "words"), [
    (["--merge", "nowhere"], "--merge needs --output"),
    (["--train", "x.csv", "--output", "o"], "train needs --task."),
    (["--merge", "nowhere", "--output", "o"], "does not exist"),
])
def test_bad_lora_input_is_one_line(tmp_path: Path, capfd, args: list[str], words: str) -> None:  # noqa: ANN001
    done = run_cli(capfd, "train", *args)
    assert done.returncode == 1 and words in done.stderr and "Traceback" not in done.stderr


def test_merge_refuses_a_plain_model_folder(tmp_path: Path, checkpoint_factory, capfd) -> None:  # noqa: ANN001
    done = run_cli(capfd, "train", "--merge", str(checkpoint_factory("bert", "Model")), "--output", str(tmp_path / "m"))
    assert done.returncode == 1 and "is not a LoRA adapter folder" in done.stderr
    assert not (tmp_path / "m").exists()
