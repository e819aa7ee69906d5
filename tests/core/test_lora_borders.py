"""Issue 40, LoRA borders: a stopped LoRA run resumes from its adapter checkpoint (it said "no complete
checkpoint" beside checkpoint-N); a rank above the hidden size is refused; --merge on a missing path
says not found; peft's wrapping raises no FutureWarning (transformers' deprecated attribute it reads)."""

from __future__ import annotations

import threading
import warnings
from dataclasses import replace
from pathlib import Path

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.progress import ProgressEvent, TaskControl
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.engine import train
from bertstudio.core.training.lora import LoraSettings, merge_folder, wrap
from tests.conftest import run_cli
from tests.core.test_training import toy_csv


def _steps(into: list[int], stop: threading.Event | None = None, at: int = 0):  # noqa: ANN202
    def on(event: ProgressEvent) -> None:
        payload = event.payload
        if payload is not None and getattr(payload, "kind", "") == "step":
            into.append(payload.step)
            if stop is not None and payload.step >= at:
                stop.set()

    return TaskControl(on_progress=on)


def test_a_stopped_lora_run_resumes_from_its_adapter_checkpoint(tmp_path: Path, checkpoint_factory) -> None:  # noqa: ANN001
    config = TrainConfig(model=str(checkpoint_factory("bert", "Model")), task="classify",
                         train_file=str(toy_csv(tmp_path / "toy.csv", 24)), output_dir=str(tmp_path / "out"),
                         max_steps=6, batch_size=4, max_length=16, lora_rank=4, save_steps=2, eval_share=0.0)
    stop, first = threading.Event(), []
    stopped = train(config, _steps(first, stop, 2), stop_event=stop)
    assert stopped.stopped and list((tmp_path / "out.checkpoints").glob("checkpoint-*"))
    second: list[int] = []
    resumed = train(replace(config, resume=True), _steps(second))
    assert resumed.step == 6 and not resumed.stopped
    assert second and second[0] > 2  # continued from the checkpoint, not from step 1
    assert (tmp_path / "out" / "adapter_model.safetensors").is_file()


def test_a_rank_above_the_hidden_size_is_refused(checkpoint_factory) -> None:  # noqa: ANN001
    import transformers

    model = transformers.AutoModelForSequenceClassification.from_pretrained(str(checkpoint_factory("bert", "Model")))
    with pytest.raises(InputError, match=r"LoRA rank 1024 is more than the model's hidden size \(32\)"):
        wrap(model, LoraSettings(1024), "m")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # peft reads transformers' deprecated is_gradient_checkpointing
        wrap(model, LoraSettings(4), "m")


def test_merge_of_a_missing_path_says_not_found(tmp_path: Path, capfd) -> None:  # noqa: ANN001
    with pytest.raises(InputError, match="does not exist"):
        merge_folder(str(tmp_path / "nowhere"), str(tmp_path / "merged"))
    done = run_cli(capfd, "train", "--merge", str(tmp_path / "nowhere"), "--output", str(tmp_path / "merged"))
    assert done.returncode == 1 and "does not exist" in done.stderr and "not a LoRA" not in done.stderr
