"""Training throughput of the QA, multiple-choice and regression trainers vs a plain Trainer.

Per task: a run through bertstudio (`train`: reading, event callback, JSON log, UI signal) and a
plain `Trainer` on the same encoded rows, model, TrainingArguments and seed, timed alternately;
the figure is Trainer's own train_samples_per_second (median of the rounds). The raw side gives
the model only its own inputs (QA's validation offsets stripped) and transformers' padding
collator (multiple choice has none in transformers: the same choice-padding collator).
Row times are seconds per 1000 training samples; the note gives the samples/s ratio (target >= 0.95).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from bench_training import _model_folder, rate_row
from common import Row

STEPS, BATCH, MAX_LENGTH = 20, 8, 64
FILES = {"qa": "qa_train.json", "choice": "choice_train.csv", "regression": "sts_train.csv"}


def rows() -> list[Row]:
    from PySide6.QtCore import QObject, Signal
    from transformers import AutoTokenizer, DataCollatorWithPadding, PrinterCallback, Trainer, set_seed

    from bertstudio.core.progress import TaskControl
    from bertstudio.core.training.config import TrainConfig
    from bertstudio.core.training.engine import plan_steps, train, training_arguments
    from bertstudio.core.training.trainable import TRAINABLE
    from bertstudio.resources import resource_path

    class Emitter(QObject):
        progress = Signal(object)

    import torch

    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", torch.get_num_threads())))  # 1 on a loaded machine
    root = Path(tempfile.mkdtemp(prefix="bench-training-tasks-"))
    folder = _model_folder(root)
    out: list[Row] = []
    for task, name in FILES.items():
        trainable = TRAINABLE[task]
        config = TrainConfig(task=task, model=str(folder), train_file=str(resource_path("datasets", name)),
                             eval_share=0.0, output_dir=str(root / f"ours-{task}"), overwrite=True, max_steps=STEPS,
                             batch_size=BATCH, max_length=MAX_LENGTH)
        received: list[object] = []
        emitter = Emitter()
        emitter.progress.connect(received.append)

        def ours(config: TrainConfig = config, emitter: Emitter = emitter) -> float:
            return train(config, TaskControl(on_progress=emitter.progress.emit)).metrics["train_samples_per_second"]

        def raw(config: TrainConfig = config, task: str = task, trainable=trainable) -> float:  # noqa: ANN001
            set_seed(config.seed)
            tokenizer = AutoTokenizer.from_pretrained(folder)
            data = trainable.read(config)
            examples, _ = trainable.encode(tokenizer, data.train, data.labels, MAX_LENGTH, False)
            keep = {"input_ids", "token_type_ids", "attention_mask", "labels", "start_positions", "end_positions"}
            examples = [{k: v for k, v in e.items() if k in keep} for e in examples]
            model, _ = trainable.load(folder, config, data.labels, tokenizer)
            collator = trainable.collator(tokenizer) if task == "choice" else DataCollatorWithPadding(tokenizer)
            total, warmup, _ = plan_steps(len(examples), config)
            trainer = Trainer(model=model, args=training_arguments(config, total, warmup, root / f"raw-{task}", False),
                              train_dataset=examples, data_collator=collator, processing_class=tokenizer)
            trainer.remove_callback(PrinterCallback)
            return trainer.train().metrics["train_samples_per_second"]

        out.append(rate_row(f"train {task} {STEPS} steps x {BATCH} (bert 2x128, s/1000 samples)", ours, raw,
                            received))
    return out
