"""Fine-tuning and pre-training on transformers' Trainer: events out, stop in, safe save.

Trainer, `get_scheduler` and the data collators do the training; this module adds what a
point-and-click user needs around them: every setting and the output folder checked before
any model is loaded, the step count and warmup fixed up front (so the planned learning-rate
curve is exact), events and a stop request through `callback.py`, a JSON-lines log, resume
from the last complete checkpoint, and a model folder that appears only when complete.
What differs per task lives in `trainable.py`; where files may go, in `saving.py`. The same
run scales with `torchrun` because nothing here replaces Trainer's loop.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from bertstudio.core import devices, outputs
from bertstudio.core.anatomy.families import max_positions
from bertstudio.core.errors import DeviceError, InputError
from bertstudio.core.json_values import dumps
from bertstudio.core.model_folder import load_pretrained
from bertstudio.core.progress import TaskControl
from bertstudio.core.runs import tb_logs
from bertstudio.core.runs.recorder import RunRecorder
from bertstudio.core.training import data as data_mod
from bertstudio.core.training import early_stopping, lora, model_card, resume, saving
from bertstudio.core.training.callback import EvaluationStopped, event_callback
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.events import EVENTS_FILE, EventLog, Plan, TrainingEvent, TrainResult, preparing
from bertstudio.core.training.schedules import warmup_steps_for
from bertstudio.core.training.trainable import TRAINABLE, Data


def plan_steps(train_examples: int, config: TrainConfig) -> tuple[int, int, int]:
    """(total optimiser steps, warmup steps, steps per epoch); fixed here so the curve is exact."""
    world = max(1, int(os.environ.get("WORLD_SIZE", "1")))  # under torchrun each process takes a batch
    batches = max(1, math.ceil(train_examples / (config.batch_size * world)))
    per_epoch = max(1, math.ceil(batches / config.grad_accum))
    total = config.max_steps if config.max_steps > 0 else max(1, math.ceil(config.epochs * per_epoch))
    return total, warmup_steps_for(total, config.warmup_steps, config.warmup_ratio), per_epoch


def plan(config: TrainConfig) -> Plan:
    """Read the data (no model) and work out the step counts: cheap enough to call as settings change."""
    task = TRAINABLE[config.task]
    data = task.read(config)
    count = task.planned_examples(config, data)  # QA: the windows a long context is split into
    total, warmup, per_epoch = plan_steps(count, config)
    return Plan(count, len(data.eval) if data.eval is not None else 0, total, warmup, per_epoch, data.notes)


def _load_tokenizer(folder: Path) -> Any:
    from transformers import AutoTokenizer

    return load_pretrained(AutoTokenizer, folder, f"The tokenizer in '{folder}' cannot be loaded.")


def _load_model(config: TrainConfig, data: Data, control: TaskControl) -> tuple[Any, Any, bool]:
    """(model, tokenizer, with NSP) for the task: heads for our labels, or a scratch model."""
    import transformers

    from bertstudio.core.models import quiet_transformers, resolve_source

    quiet_transformers()
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()  # "Writing model shards" bars would break the CLI's clean output
    transformers.set_seed(config.seed)
    task = TRAINABLE[config.task]
    if config.scratch is not None and not config.model:
        control.report("Training a WordPiece vocabulary on the corpus…")
        model, tokenizer = task.scratch(config)
        return model, tokenizer, True
    folder = resolve_source(config.model, control)
    control.report(f"Loading {config.model}…")
    tokenizer = _load_tokenizer(folder)
    control.check()  # a Ctrl+C while the tokenizer loaded does not wait for the model too
    model, nsp = task.load(folder, config, data.labels, tokenizer)
    return model, tokenizer, nsp


def _model_limit(model: Any, tokenizer: Any) -> int:
    positions = max_positions(model.config) or 512
    limit = getattr(tokenizer, "model_max_length", None) or positions
    return int(min(positions, limit if limit < 1_000_000 else positions))


def _checked(config: TrainConfig) -> TrainConfig:
    """Validate settings and device before anything heavy; 'cuda' without CUDA is refused."""
    config.validate()
    if config.device != "cpu":
        from bertstudio.core.devices import normalise_device

        config = replace(config, device=normalise_device(config.device))
    return config


def train(config: TrainConfig, control: TaskControl | None = None,
          stop_event: threading.Event | None = None) -> TrainResult:
    """Run a training job to the end (or to a stop request) and save the model atomically.

    Stops after the current step (or at the next batch of an evaluation) when
    `control.stop_requested` (the runner cancelled) or `stop_event` (the user's Stop) is
    set; both save what was trained and a resumable checkpoint.
    """
    control = control or TaskControl()
    config = _checked(config)
    main = int(os.environ.get("RANK", "0")) == 0  # under torchrun only rank 0 writes and reports
    if main:
        output = saving.check_output(config.output_dir, replace=config.overwrite or config.resume)
    else:
        output = saving.resolved(config.output_dir)
    lock = outputs.folder_lock(output, config.task) if main else contextlib.nullcontext()
    ckpt_dir = saving.checkpoints_dir(output)
    recorder = RunRecorder(config, output) if main else None  # the runs index hears how it ends
    with lock as held:
        # this run makes the checkpoints folder: it is new, or an earlier run's that --overwrite replaces
        created = main and (not ckpt_dir.exists() or config.overwrite and not config.resume
                            and saving.is_ours(ckpt_dir))
        try:
            result = _train_locked(config, output, control, stop_event, main, held.note if held else "")
        except BaseException as error:
            if recorder is not None:
                recorder.failed(error, ckpt_dir)  # before its log and marker are cleaned up
            if main:  # a failed run leaves no empty checkpoints folder of its own (a complete checkpoint stays)
                saving.remove_if_created(ckpt_dir, created)
            raise
    if recorder is not None:
        recorder.finished(result)
    return result


def _resume_point(config: TrainConfig, ckpt_dir: Path, main: bool) -> tuple[str | None, list[str],
                                                                             resume.RunIdentity | None]:
    """A resumed run's checkpoint, notes and recorded run; a fresh run's --overwrite clears old ones (ours)."""
    if not config.resume:
        if main and config.overwrite:
            saving.remove_ours(ckpt_dir)
        return None, [], None
    recorded = None
    if ckpt_dir.is_dir() and any(ckpt_dir.glob("checkpoint-*")):  # compared before anything is changed
        marker = saving.read_marker(ckpt_dir)
        resume.check_task(marker["task"] if marker else None, config.task, ckpt_dir)
        recorded = resume.RunIdentity.from_json(saving.marker_run(ckpt_dir))
    found, notes = saving.resume_checkpoint(ckpt_dir)
    return str(found), notes, recorded


def _prepared_model(config: TrainConfig, data: Data, resume_from: str | None, notes: list[str],
                    control: TaskControl) -> tuple[Any, Any, bool, lora.LoraSettings | None]:
    """The model to train (LoRA-wrapped where asked), its tokenizer and whether it reads pairs, checked."""
    model, tokenizer, nsp = _load_model(config, data, control)
    control.check()
    lora_settings = lora.settings_of(config)
    if lora_settings is not None:  # peft: the adapter and the head train, the rest is frozen
        model = lora.wrap(model, lora_settings, lora.base_source(config.model))
        notes.append(f"LoRA rank {lora_settings.rank}: {lora.count(model).describe()}.")
    if resume_from:
        resume.check_checkpoint_head(Path(resume_from), model)
    limit = _model_limit(model, tokenizer)
    if config.max_length > limit:
        raise InputError(f"The maximum length {config.max_length} is longer than this model allows ({limit}).",
                         hint=f"Choose {limit} or less.")
    return model, tokenizer, nsp, lora_settings


def _encoded(task: Any, tokenizer: Any, data: Data, config: TrainConfig, nsp: bool,
             control: TaskControl) -> tuple[list, list | None, Any]:
    """The training rows, the validation rows (None without validation data) and the training lengths."""
    preparing(control, f"Tokenizing {len(data.train):,} training and {len(data.eval or ()):,} validation examples…")
    train_rows, lengths = task.encode(tokenizer, data.train, data.labels, config.max_length, nsp, control)
    eval_rows = (task.encode(tokenizer, data.eval, data.labels, config.max_length, nsp, control)[0]
                 if data.eval is not None else None)
    return train_rows, eval_rows, lengths


def _plan_event(train: int, evaluated: int, total: int, warmup: int, model: Any, summary: Any,
                notes: str) -> TrainingEvent:
    from bertstudio.core.training.schedules import decay_split

    decayed, tensors = decay_split(model)
    return TrainingEvent(
        "plan", step=0, max_steps=total,
        message=(f"{train} training and {evaluated} validation examples; {total} steps, "
                 f"{warmup} warmup; weight decay applies to {decayed} of {tensors} parameter tensors. "
                 f"{summary.message}" + (f" {notes}" if notes else "")),
        metrics={"train_examples": train, "eval_examples": evaluated,
                 "warmup_steps": warmup, "decay_tensors": decayed, "parameter_tensors": tensors,
                 "truncated": summary.truncated, "longest": summary.longest},
    )


def _write_model(trainer: Any, partial: Path, config: TrainConfig, data: Data, metrics: dict[str, Any],
                 run: resume.RunIdentity, main: bool, lora_settings: lora.LoraSettings | None) -> None:
    """The trained model, its tokenizer, settings, metrics and card into the partial folder."""
    if main:
        saving.write_marker(partial, "model", config.task, run.to_json())  # the data it was trained on
    trainer.save_model(str(partial))  # every process takes part (sharded models gather here)
    if not main:
        return
    if lora_settings is not None:
        lora.save_head_config(trainer.model, partial)  # labels and head class, to rebuild the base with
    trainer.processing_class.save_pretrained(str(partial))
    (partial / "training_config.json").write_text(dumps(asdict(config), indent=2, default=str), encoding="utf-8")
    (partial / "metrics.json").write_text(dumps(metrics, indent=2), encoding="utf-8")
    model_card.write_card(partial, model_card.CardFacts.of_run(config, data, metrics), replace_foreign=True)


def _train_locked(config: TrainConfig, output: Path, control: TaskControl, stop_event: threading.Event | None,
                  main: bool, lock_note: str) -> TrainResult:
    ckpt_dir = saving.checkpoints_dir(output)
    task = TRAINABLE[config.task]
    resume_from, resume_notes, recorded = _resume_point(config, ckpt_dir, main)
    control.report("Reading the data…")
    data = task.read(config, nsp=task.reads_pairs(config, control))
    control.check()
    run = resume.identity(config, data.labels, len(data.train), control)
    if resume_from:
        resume_notes.append(resume.check_identity(recorded, run, ckpt_dir))
    model, tokenizer, nsp, lora_settings = _prepared_model(config, data, resume_from, resume_notes, control)
    train_rows, eval_rows, lengths = _encoded(task, tokenizer, data, config, nsp, control)
    total, warmup, _per_epoch = plan_steps(len(train_rows), config)
    control.check()
    with saving.saving_to(None, "the training log", where=ckpt_dir):
        if main:
            saving.write_marker(ckpt_dir, "checkpoints", config.task, run.to_json())
        log = EventLog(ckpt_dir / EVENTS_FILE, main, bool(resume_from), control)
    notes = " ".join(note for note in (lock_note, *data.notes, *resume_notes) if note)
    log.emit(_plan_event(len(train_rows), len(eval_rows or []), total, warmup, model,
                         data_mod.length_summary(lengths, config.max_length), notes))
    trainer = None
    try:
        trainer = _trainer(config, model, tokenizer, train_rows, eval_rows, data, nsp, total, warmup, ckpt_dir)
        callback = event_callback(
            log.emit, lambda: control.stop_requested or bool(stop_event and stop_event.is_set()),
            config.samples_per_step * max(1, trainer.args.world_size), loss_scaled=config.precision == "fp16",
        )
        trainer.add_callback(callback)
        control.report("Training…", 0.0)
        output_metrics = _fit(trainer, resume_from, ckpt_dir)
        _refuse_diverged(callback.diverged, trainer)
        best = early_stopping.best_event(config, task, trainer.state, by_user=callback.stopped)
        if best is not None and main:
            log.emit(best)
        metrics = _final_metrics(trainer, bool(eval_rows), output_metrics, control, best is not None)
        tb_logs.close_writers(trainer)  # a final evaluate() reopened one
        step = trainer.state.global_step
        partial = saving.partial_dir(output)
        if main:
            log.emit(TrainingEvent("saving", step=step, max_steps=total, message="Saving…"))
            saving.remove_ours(partial)
        trainer.accelerator.wait_for_everyone()
        with saving.saving_to(partial, where=output.parent):
            _write_model(trainer, partial, config, data, metrics, run, main, lora_settings)
            if main:
                log.emit(TrainingEvent("done", step=step, max_steps=total, metrics=metrics, output_dir=str(output),
                                       message="Stopped early; saved what was trained." if callback.stopped
                                       else "Finished."))
                (partial / EVENTS_FILE).write_bytes(log.path.read_bytes())
                tb_logs.copy_logs(ckpt_dir, partial)
                saving.replace_folder(partial, output)
    finally:
        log.file.close()
        tb_logs.close_writers(trainer)
    return TrainResult(str(output), config.task, callback.stopped, step, total, metrics, task.opens_in(nsp),
                       str(output / EVENTS_FILE), _kept_checkpoints(ckpt_dir, main, callback.stopped))


def _kept_checkpoints(ckpt_dir: Path, main: bool, stopped: bool) -> str:
    """The checkpoints folder a stopped run can resume from; otherwise it is removed ("")."""
    if main and stopped and any(ckpt_dir.glob("checkpoint-*")):
        return str(ckpt_dir)  # resumable: the UI says where and how large, and offers to delete it
    if main:
        saving.remove_ours(ckpt_dir)  # nothing to resume; the event log is in the model folder
    return ""


def _refuse_diverged(why: str, trainer: Any) -> None:
    """A loss, gradient norm or weight that is not a finite number ends the run with no model saved
    (every task: an overflowing score, a learning rate too high, fp16 overflow)."""
    from bertstudio.core.training.callback import weights_finite

    if not why and weights_finite(trainer.model):
        return
    why = why or f"at step {trainer.state.global_step}: the weights are not all finite numbers"
    raise InputError(f"Training stopped {why}, so nothing was saved as a model.",
                     hint="Lower the learning rate, look for extreme labels or scores in the data, or train in full "
                          "precision; a complete checkpoint of an earlier step is kept.")


def _fit(trainer: Any, resume_from: str | None, ckpt_dir: Path) -> dict[str, float]:
    """trainer.train with a stop during a mid-run evaluation still leaving a resumable checkpoint."""
    try:
        with saving.saving_to(None, "a checkpoint", where=ckpt_dir):
            return dict(trainer.train(resume_from_checkpoint=resume_from).metrics)
    except EvaluationStopped:
        with contextlib.suppress(Exception), saving.saving_to(None, "a checkpoint", where=ckpt_dir):
            trainer._save_checkpoint(trainer.model, trial=None)  # noqa: SLF001 - Trainer's own checkpoint writer
        return {}
    except RuntimeError as error:
        if devices.is_out_of_memory(error):
            raise DeviceError("The device ran out of memory while training.",
                              hint="Lower the batch size or maximum length, or train on the CPU.") from error
        raise


def _final_metrics(trainer: Any, evaluate: bool, output_metrics: dict[str, float],
                   control: TaskControl, best_kept: bool = False) -> dict[str, float]:
    """The last validation (run now unless the final step already had one; always when early stopping
    kept an earlier step's model) and the last training loss."""
    metrics: dict[str, float] = {}
    if evaluate:
        evals = [h for h in trainer.state.log_history if "eval_loss" in h]
        last = evals[-1] if evals else {}
        if best_kept or last.get("step") != trainer.state.global_step:  # the final step had no evaluation yet
            control.report("Evaluating…")
            try:
                last = trainer.evaluate()
            except EvaluationStopped:
                last = {}
        metrics = {k: float(v) for k, v in last.items()
                   if k.startswith("eval_") and not k.endswith(("_runtime", "_per_second"))}
    train_loss = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    if train_loss:
        metrics["train_loss"] = float(train_loss[-1])
    for key in ("train_runtime", "train_samples_per_second"):
        if key in output_metrics:
            metrics[key] = float(output_metrics[key])
    return metrics


def training_arguments(config: TrainConfig, total: int, warmup: int, output_dir: Path, evaluate: bool) -> Any:
    """TrainingArguments for the run (also used by the benchmark's plain Trainer)."""
    from transformers import TrainingArguments

    arguments: dict[str, Any] = dict(
        output_dir=str(output_dir), max_steps=total, per_device_train_batch_size=config.batch_size,
        per_device_eval_batch_size=config.batch_size * 2, gradient_accumulation_steps=config.grad_accum,
        learning_rate=config.learning_rate, weight_decay=config.weight_decay, lr_scheduler_type=config.scheduler,
        warmup_steps=warmup, seed=config.seed, data_seed=config.seed,
        logging_strategy="steps", logging_steps=max(1, config.logging_steps),
        eval_strategy="steps" if evaluate and config.eval_steps > 0 else "no",
        eval_steps=config.eval_steps if config.eval_steps > 0 else None,
        save_strategy="steps" if config.save_steps > 0 else "no",
        save_steps=config.save_steps if config.save_steps > 0 else 500, save_total_limit=2,
        fp16=config.precision == "fp16", bf16=config.precision == "bf16",
        use_cpu=config.device.startswith("cpu"), report_to=tb_logs.report_to(), disable_tqdm=True,
        dataloader_num_workers=0, optim="adamw_torch",
        logging_nan_inf_filter=False,  # a NaN or infinite loss is shown (and stops the run), never hidden as 0
    )
    arguments.update(early_stopping.arguments(config, TRAINABLE[config.task], total, evaluate))
    return TrainingArguments(**arguments)


def _trainer(config: TrainConfig, model: Any, tokenizer: Any, train_rows: list, eval_rows: list | None,
             data: Data, nsp: bool, total: int, warmup: int, ckpt_dir: Path) -> Any:
    from transformers import PrinterCallback, ProgressCallback, Trainer

    task = TRAINABLE[config.task]
    args = training_arguments(config, total, warmup, ckpt_dir, evaluate=bool(eval_rows))
    # the task's validation scores and how its logits are reduced first (argmax, or kept whole for QA spans)
    compute, reduce = task.evaluation(data, eval_rows, nsp) if eval_rows else (None, None)
    trainer = task.trainer_class(Trainer)(
        model=model, args=args, train_dataset=train_rows, eval_dataset=eval_rows or None,
        data_collator=task.collator(tokenizer), processing_class=tokenizer,
        compute_metrics=compute, preprocess_logits_for_metrics=reduce,
        callbacks=early_stopping.callbacks(config, bool(eval_rows)),
    )
    # stdout stays pure for `--json`: events come out through our callback only
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    return trainer
