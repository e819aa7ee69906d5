"""Training throughput: a run through bertstudio (event callback, JSON log, UI signal) vs plain Trainer.

Same model, data, TrainingArguments and seed; the figure is Trainer's own
train_samples_per_second. The Row times are seconds per 1000 training samples, so the
table's ratio is ours/raw time; the note gives the samples/s ratio (target >= 0.95).
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from common import Row

if TYPE_CHECKING:
    from bertstudio.core.training.config import TrainConfig

STEPS, BATCH, MAX_LENGTH, ROUNDS = 60, 16, 32, 3


def _model_folder(root: Path) -> Path:
    """A small random BERT (2 layers, hidden 128) on the tiny test vocabulary."""
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    from tests.fixtures.checkpoints import make_tokenizer

    folder = root / "bench-bert"
    tokenizer = make_tokenizer("bert")
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=512, max_position_embeddings=64)
    BertForSequenceClassification(config).save_pretrained(folder)
    assert isinstance(tokenizer, BertTokenizer)
    tokenizer.save_pretrained(folder)
    return folder


def rows() -> list[Row]:
    from PySide6.QtCore import QObject, Signal

    from bertstudio.core.progress import TaskControl
    from bertstudio.core.training.config import TrainConfig
    from bertstudio.core.training.engine import train
    from bertstudio.resources import resource_path

    class Emitter(QObject):
        progress = Signal(object)

    root = Path(tempfile.mkdtemp(prefix="bench-training-"))
    folder = _model_folder(root)
    data = resource_path("datasets", "reviews_train.csv")
    config = TrainConfig(task="text-classification", model=str(folder), train_file=str(data), eval_share=0.0,
                         output_dir=str(root / "ours"), overwrite=True, max_steps=STEPS, batch_size=BATCH,
                         max_length=MAX_LENGTH)
    received: list[object] = []
    emitter = Emitter()
    emitter.progress.connect(received.append)  # what the tab's runner does with each event

    def ours() -> float:
        result = train(config, TaskControl(on_progress=emitter.progress.emit))
        return result.metrics["train_samples_per_second"]

    return [rate_row(f"train {STEPS} steps x {BATCH} (bert 2x128, s/1000 samples)", ours,
                     lambda: plain_trainer_rate(config, root / "raw"), received),
            lora_row(config, root)]


def lora_row(config: TrainConfig, root: Path) -> Row:
    """LoRA (rank 8, query/value; peft) vs full fine-tuning through the same engine, same data and steps:
    the Row holds seconds per 1000 samples (ratio LoRA/full time); the note gives samples/s of each."""
    from dataclasses import replace

    from bertstudio.core.training.engine import train

    def rate(run: TrainConfig) -> float:
        return train(run).metrics["train_samples_per_second"]

    lora = replace(config, lora_rank=8, output_dir=str(root / "lora"))
    full = replace(config, output_dir=str(root / "full"))
    rate(lora), rate(full)  # warm-up
    a, b = [], []
    for _ in range(ROUNDS):
        a.append(rate(lora))
        b.append(rate(full))
    lora_rate, full_rate = statistics.median(a), statistics.median(b)
    return Row(f"LoRA r8 vs full fine-tune, {STEPS} steps x {BATCH} (s/1000 samples)", 1000 / lora_rate,
               1000 / full_rate, f"samples/s LoRA {lora_rate:.1f} vs full {full_rate:.1f}")


def plain_trainer_rate(config: TrainConfig, output: Path, callbacks: list | None = None) -> float:
    """samples/s of a plain Trainer on a classification config's model and data, with the
    TrainingArguments our run builds from it (same seed, steps, precision and device); `callbacks`
    added (bench/gpu_check.py adds ours alone, to find what a run of ours costs beyond Trainer)."""
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorWithPadding,
        PrinterCallback,
        Trainer,
        set_seed,
    )

    from bertstudio.core.tasks.classification.train import TextClassification
    from bertstudio.core.training.data import read_labelled
    from bertstudio.core.training.engine import plan_steps, training_arguments

    set_seed(config.seed)
    tokenizer = AutoTokenizer.from_pretrained(config.model)
    rows_ = read_labelled(Path(config.train_file))
    labels = sorted(set(rows_.labels))
    examples, _ = TextClassification().encode(tokenizer, rows_, labels, config.max_length, False)
    model = AutoModelForSequenceClassification.from_pretrained(config.model, num_labels=len(labels))
    total, warmup, _ = plan_steps(len(examples), config)
    trainer = Trainer(model=model, args=training_arguments(config, total, warmup, output, False),
                      train_dataset=examples, data_collator=DataCollatorWithPadding(tokenizer),
                      processing_class=tokenizer, callbacks=callbacks)
    trainer.remove_callback(PrinterCallback)  # keep the bench output readable
    return trainer.train().metrics["train_samples_per_second"]


def rate_row(name: str, ours: Callable[[], float], raw: Callable[[], float], received: list[object]) -> Row:
    """One warm-up, then ROUNDS alternate runs of each side; a training run is too long for more.

    `ours` and `raw` return samples/s; the Row holds seconds per 1000 samples so that the
    table's ratio reads like every other bench (ours/raw time)."""
    ours(), raw()  # warm-up
    a, b = [], []
    for _ in range(ROUNDS):
        a.append(ours())
        b.append(raw())
    ours_rate, raw_rate = statistics.median(a), statistics.median(b)
    assert received, "the UI signal received no events"
    return Row(name, 1000 / ours_rate, 1000 / raw_rate,
               f"samples/s ours {ours_rate:.1f} vs plain Trainer {raw_rate:.1f}: ratio {ours_rate / raw_rate:.3f}")
