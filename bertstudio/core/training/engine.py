"""Fine-tuning and pre-training on transformers' Trainer: events out, stop in, atomic save.

Trainer, `get_scheduler` and the data collators do the training; what this module adds is
what a point-and-click user needs around them: data checked before the first step, the step
count and warmup fixed up front (so the planned learning-rate curve is exact), a callback
that streams frozen `TrainingEvent`s through `TaskControl.report` and turns a stop request
into `should_training_stop`, a JSON-lines log, resume, and a model folder that appears
only when complete (written to DIR.partial, then renamed). The same run scales with
`accelerate launch` because nothing here replaces Trainer's loop.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from bertstudio.core.errors import DeviceError, InputError, ModelSourceError
from bertstudio.core.progress import TaskControl
from bertstudio.core.training import data as data_mod
from bertstudio.core.training.data import Columns, LengthSummary
from bertstudio.core.training.pretraining import ScratchConfig
from bertstudio.core.training.schedules import SCHEDULERS, warmup_steps_for

TASKS = ("text-classification", "token-classification", "pretraining")
# The app tabs (core/models.py TASK_MODEL_CLASSES keys) that open a model trained for each task.
OPEN_IN = {
    "text-classification": ("classification",),
    "token-classification": ("ner",),
    "pretraining": ("fill-mask", "nsp"),
}
EVENTS_FILE = "events.jsonl"


@dataclass(frozen=True)
class TrainConfig:
    """Every setting of a run: a plain object the tab builds and the CLI fills from arguments."""

    task: str
    train_file: str
    output_dir: str
    model: str = ""  # Hub id or folder; empty for pre-training from scratch
    eval_file: str | None = None
    eval_share: float = 0.1  # held out of the training file when there is no eval file
    columns: Columns | None = None  # text classification: None means detected
    scratch: ScratchConfig | None = None  # pre-training from scratch
    scheduler: str = "linear"
    warmup_steps: int = 0
    warmup_ratio: float = 0.0
    epochs: float = 3.0
    max_steps: int = 0  # > 0 overrides epochs
    batch_size: int = 16
    grad_accum: int = 1
    learning_rate: float = 5e-5
    weight_decay: float = 0.01
    seed: int = 42
    max_length: int = 128
    eval_steps: int = 0  # 0: evaluate once at the end
    precision: str = "no"  # "fp16" or "bf16" on a GPU
    device: str = "cpu"
    logging_steps: int = 1
    save_steps: int = 0  # > 0: a resumable checkpoint every N steps
    resume: bool = False

    def validate(self) -> None:
        if self.task not in TASKS:
            raise InputError(f"Unknown training task '{self.task}'.", hint=f"Choose one of {', '.join(TASKS)}.")
        if self.scheduler not in SCHEDULERS:
            raise InputError(f"Unknown scheduler '{self.scheduler}'.", hint=f"Choose one of {', '.join(SCHEDULERS)}.")
        if not self.model and not (self.task == "pretraining" and self.scratch is not None):
            raise InputError("No base model chosen.",
                             hint="Choose a model folder or Hub id (or pre-train from scratch).")
        if not self.output_dir:
            raise InputError("No output folder chosen.", hint="Choose where the trained model is saved.")
        if self.batch_size < 1 or self.grad_accum < 1:
            raise InputError("Batch size and gradient accumulation must be at least 1.")
        if self.max_steps <= 0 and self.epochs <= 0:
            raise InputError("Train for at least one step: set epochs or max steps.")
        if self.learning_rate <= 0:
            raise InputError("The learning rate must be positive.")
        if not 0 <= self.warmup_ratio < 1:
            raise InputError("The warmup ratio must be between 0 and 1.")
        if self.max_length < 8:
            raise InputError("The maximum sequence length must be at least 8 tokens.")
        if self.precision not in ("no", "fp16", "bf16"):
            raise InputError(f"Unknown precision '{self.precision}'.", hint="Use no, fp16 or bf16.")
        if self.precision != "no" and self.device.startswith("cpu"):
            raise DeviceError(f"{self.precision} training needs a GPU.", hint="Choose a CUDA device or full precision.")

    @property
    def samples_per_step(self) -> int:
        return self.batch_size * self.grad_accum


@dataclass(frozen=True)
class TrainingEvent:
    """One thing that happened in a run; plain values, safe to send to the GUI thread."""

    kind: str  # plan, step, eval, saved, done
    step: int = 0
    max_steps: int = 0
    epoch: float | None = None
    loss: float | None = None
    learning_rate: float | None = None
    grad_norm: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    samples_per_second: float | None = None
    eta_seconds: float | None = None
    elapsed_seconds: float | None = None
    message: str = ""
    output_dir: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"event": self.kind}
        for key, value in asdict(self).items():
            if key != "kind" and value not in (None, "", {}):
                out[key] = value
        return out


@dataclass(frozen=True)
class Plan:
    """What a run will do, known before any model is loaded: the planned LR curve needs it."""

    train_examples: int
    eval_examples: int
    total_steps: int
    warmup_steps: int
    steps_per_epoch: int


@dataclass(frozen=True)
class TrainResult:
    output_dir: str
    task: str
    stopped: bool
    step: int
    max_steps: int
    metrics: dict[str, float]
    open_in: tuple[str, ...]
    events_file: str

    def to_json(self) -> dict[str, Any]:
        return {"event": "result", **asdict(self), "open_in": list(self.open_in)}


# -- data and plan -------------------------------------------------------------------------------
@dataclass
class _Data:
    train: Any  # ClassificationData | list[TaggedSentence] | list[tuple[str, str, int]]
    eval: Any
    labels: list[str] = field(default_factory=list)
    documents: list[list[str]] = field(default_factory=list)


def _pairs(documents: list[list[str]], config: TrainConfig, nsp: bool) -> list[tuple[str, str, int]]:
    from bertstudio.core.training.pretraining import mlm_only_sentences, sentence_pairs

    return sentence_pairs(documents, config.seed) if nsp else mlm_only_sentences(documents)


def _read_data(config: TrainConfig, nsp: bool = True) -> _Data:
    """Read and check the files; split off a validation share when no eval file is given."""
    share = 0.0 if config.eval_file else config.eval_share
    if config.task == "text-classification":
        train = data_mod.read_classification(config.train_file, config.columns)
        evaluation = data_mod.read_classification(config.eval_file, train.columns) if config.eval_file else None
        if evaluation is None and share > 0 and len(train) > 1:
            keep, held = data_mod.split_indices(len(train), share, config.seed)
            train, evaluation = train.subset(keep), train.subset(held)
        labels = sorted(set(train.labels))
        if evaluation is not None:
            unknown = [data_mod.RowIssue(line, f"label '{label}' never occurs in the training data")
                       for label, line in zip(evaluation.labels, evaluation.lines, strict=True) if label not in labels]
            data_mod.raise_issues(Path(config.eval_file or config.train_file), unknown)
        if len(labels) < 2:
            raise InputError("Text classification needs at least two different labels in the training data.")
        return _Data(train, evaluation, labels)
    if config.task == "token-classification":
        sentences = data_mod.read_conll(config.train_file)
        evaluation_s = data_mod.read_conll(config.eval_file) if config.eval_file else None
        if evaluation_s is None and share > 0 and len(sentences) > 1:
            keep, held = data_mod.split_indices(len(sentences), share, config.seed)
            sentences, evaluation_s = [sentences[i] for i in keep], [sentences[i] for i in held]
        labels = data_mod.label_list([s.tags for s in sentences])
        if evaluation_s is not None:
            unknown = [data_mod.RowIssue(s.line, f"tag '{t}' never occurs in the training data")
                       for s in evaluation_s for t in s.tags if t not in labels]
            data_mod.raise_issues(Path(config.eval_file or config.train_file), unknown)
        return _Data(sentences, evaluation_s, labels)
    documents = data_mod.read_corpus(config.train_file)
    if config.eval_file:
        train_docs, eval_docs = documents, data_mod.read_corpus(config.eval_file)
    elif share > 0 and len(documents) >= 4:
        keep, held = data_mod.split_indices(len(documents), share, config.seed)
        train_docs, eval_docs = [documents[i] for i in keep], [documents[i] for i in held]
    else:
        train_docs, eval_docs = documents, None
    evaluation_p = _pairs(eval_docs, replace(config, seed=config.seed + 1), nsp) if eval_docs else None
    return _Data(_pairs(train_docs, config, nsp), evaluation_p, documents=train_docs)


def plan_steps(train_examples: int, config: TrainConfig) -> tuple[int, int, int]:
    """(total optimiser steps, warmup steps, steps per epoch); fixed here so the curve is exact."""
    batches = max(1, math.ceil(train_examples / config.batch_size))
    per_epoch = max(1, math.ceil(batches / config.grad_accum))
    total = config.max_steps if config.max_steps > 0 else max(1, math.ceil(config.epochs * per_epoch))
    return total, warmup_steps_for(total, config.warmup_steps, config.warmup_ratio), per_epoch


def plan(config: TrainConfig) -> Plan:
    """Read the data (no model) and work out the step counts: cheap enough to call as settings change."""
    data = _read_data(config)
    total, warmup, per_epoch = plan_steps(len(data.train), config)
    return Plan(len(data.train), len(data.eval) if data.eval is not None else 0, total, warmup, per_epoch)


# -- model, tokenizer and datasets ---------------------------------------------------------------
def _load_tokenizer(folder: Path) -> Any:
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
    except Exception as error:
        raise ModelSourceError(f"The tokenizer in '{folder}' cannot be loaded.", details=repr(error)) from error


def _pretraining_class(folder: Path) -> tuple[Any, bool]:
    """BERT-style pre-training (MLM + NSP) where the architecture has it, else masked LM only."""
    import inspect

    import transformers
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(folder, trust_remote_code=False)
    cls = transformers.MODEL_FOR_PRETRAINING_MAPPING.get(type(config), None)
    if cls is not None and "next_sentence_label" in inspect.signature(cls.forward).parameters:  # type: ignore[attr-defined]
        return cls, True
    if type(config) not in transformers.MODEL_FOR_MASKED_LM_MAPPING:
        raise InputError(f"A {config.model_type} model has no masked-LM head to pre-train.")
    return transformers.MODEL_FOR_MASKED_LM_MAPPING[type(config)], False


def _load_model(config: TrainConfig, data_labels: list[str], control: TaskControl) -> tuple[Any, Any, bool]:
    """(model, tokenizer, with NSP) for the task: heads for our labels, or a scratch model."""
    import transformers

    from bertstudio.core.models import quiet_transformers, resolve_source

    quiet_transformers()
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()  # "Writing model shards" bars would break the CLI's clean output
    transformers.set_seed(config.seed)
    if config.task == "pretraining" and config.scratch is not None and not config.model:
        from bertstudio.core.training.pretraining import scratch_model, train_wordpiece

        config.scratch.validate()
        control.report("Training a WordPiece vocabulary on the corpus…")
        documents = data_mod.read_corpus(config.train_file)
        tokenizer = train_wordpiece(documents, config.scratch)
        return scratch_model(tokenizer, config.scratch), tokenizer, True
    folder = resolve_source(config.model, control)
    control.report(f"Loading {config.model}…")
    tokenizer = _load_tokenizer(folder)
    kwargs: dict[str, Any] = {"trust_remote_code": False}
    if config.task == "pretraining":
        cls, nsp = _pretraining_class(folder)
        return cls.from_pretrained(folder, **kwargs), tokenizer, nsp
    if config.task == "token-classification" and not getattr(tokenizer, "is_fast", False):
        raise ModelSourceError("Token classification needs a fast tokenizer (tokenizer.json) for word alignment.")
    auto = (transformers.AutoModelForSequenceClassification if config.task == "text-classification"
            else transformers.AutoModelForTokenClassification)
    id2label = dict(enumerate(data_labels))
    model = auto.from_pretrained(
        folder, num_labels=len(data_labels), id2label=id2label, label2id={v: k for k, v in id2label.items()},
        ignore_mismatched_sizes=True, **kwargs,
    )
    return model, tokenizer, False


def _model_limit(model: Any, tokenizer: Any) -> int:
    positions = getattr(model.config, "max_position_embeddings", None) or 512
    if getattr(model.config, "model_type", "") in {"roberta", "xlm-roberta", "camembert"}:
        positions -= 2
    limit = getattr(tokenizer, "model_max_length", None) or positions
    return int(min(positions, limit if limit < 1_000_000 else positions))


def _encode_classification(tokenizer: Any, rows: Any, labels: list[str], max_length: int) -> tuple[list, list[int]]:
    index = {label: i for i, label in enumerate(labels)}
    args = (list(rows.texts), list(rows.pairs)) if rows.pairs is not None else (list(rows.texts),)
    encoded = tokenizer(*args, truncation=True, max_length=max_length)
    lengths = [len(ids) for ids in tokenizer(*args)["input_ids"]]
    examples = [
        {**{key: encoded[key][i] for key in encoded}, "labels": index[label]} for i, label in enumerate(rows.labels)
    ]
    return examples, lengths


def _encode_ner(tokenizer: Any, sentences: Any, labels: list[str], max_length: int) -> tuple[list, list[int]]:
    """Label the first sub-token of each word; the rest get -100 (ignored by the loss)."""
    index = {label: i for i, label in enumerate(labels)}
    words = [list(s.tokens) for s in sentences]
    encoded = tokenizer(words, is_split_into_words=True, truncation=True, max_length=max_length)
    lengths = [len(ids) for ids in tokenizer(words, is_split_into_words=True)["input_ids"]]
    examples = []
    for i, sentence in enumerate(sentences):
        previous, tags = None, []
        for word in encoded.word_ids(i):
            tags.append(-100 if word is None or word == previous else index[sentence.tags[word]])
            previous = word
        examples.append({**{key: encoded[key][i] for key in encoded}, "labels": tags})
    return examples, lengths


def _encode(task: str, tokenizer: Any, rows: Any, labels: list[str], max_length: int, nsp: bool):  # noqa: ANN202
    if task == "text-classification":
        return _encode_classification(tokenizer, rows, labels, max_length)
    if task == "token-classification":
        return _encode_ner(tokenizer, rows, labels, max_length)
    from bertstudio.core.training.pretraining import tokenized_pairs

    return tokenized_pairs(tokenizer, rows, max_length, nsp)


# -- metrics -------------------------------------------------------------------------------------
def _entities(tags: list[str]) -> set[tuple[int, int, str | None]]:
    """BIO spans (start, end, type); an I- without a matching B- starts a span, as seqeval does."""
    spans: set[tuple[int, int, str | None]] = set()
    start: int | None = None
    kind: str | None = None
    for i, tag in enumerate([*tags, "O"]):
        prefix, _, name = tag.partition("-")
        if start is not None and (prefix != "I" or name != kind):
            spans.add((start, i, kind))
            start, kind = None, None
        if prefix in ("B", "I") and start is None:
            start, kind = i, name
    return spans


def _metrics_for(task: str, labels: list[str], nsp: bool) -> tuple[Callable | None, Callable | None]:
    """(compute_metrics, preprocess_logits_for_metrics): argmax early so eval keeps no logits."""
    import numpy as np

    def argmax(logits: Any, _labels: Any) -> Any:
        if isinstance(logits, tuple):
            return tuple(part.argmax(-1) for part in logits)
        return logits.argmax(-1)

    if task == "text-classification":
        def classification(pred: Any) -> dict[str, float]:
            predicted, gold = np.asarray(pred.predictions), np.asarray(pred.label_ids)
            f1s = []
            for k in range(len(labels)):
                tp = float(((predicted == k) & (gold == k)).sum())
                fp, fn = float(((predicted == k) & (gold != k)).sum()), float(((predicted != k) & (gold == k)).sum())
                f1s.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
            return {"accuracy": float((predicted == gold).mean()), "macro_f1": float(np.mean(f1s))}
        return classification, argmax
    if task == "token-classification":
        def ner(pred: Any) -> dict[str, float]:
            predicted, gold = np.asarray(pred.predictions), np.asarray(pred.label_ids)
            tp = fp = fn = 0
            for p_row, g_row in zip(predicted, gold, strict=True):
                keep = g_row != -100
                p_spans = _entities([labels[i] for i in p_row[keep]])
                g_spans = _entities([labels[i] for i in g_row[keep]])
                tp, fp, fn = tp + len(p_spans & g_spans), fp + len(p_spans - g_spans), fn + len(g_spans - p_spans)
            mask = gold != -100
            return {
                "accuracy": float((predicted[mask] == gold[mask]).mean()),
                "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0,
                "precision": tp / (tp + fp) if tp + fp else 0.0,
                "recall": tp / (tp + fn) if tp + fn else 0.0,
            }
        return ner, argmax

    def pretraining(pred: Any) -> dict[str, float]:
        predictions = pred.predictions if isinstance(pred.predictions, tuple) else (pred.predictions,)
        golds = pred.label_ids if isinstance(pred.label_ids, tuple) else (pred.label_ids,)
        mlm_p, mlm_g = np.asarray(predictions[0]), np.asarray(golds[0])
        mask = mlm_g != -100
        out = {"mlm_accuracy": float((mlm_p[mask] == mlm_g[mask]).mean()) if mask.any() else 0.0}
        if nsp and len(predictions) > 1 and len(golds) > 1:
            out["nsp_accuracy"] = float((np.asarray(predictions[1]) == np.asarray(golds[1])).mean())
        return out
    return pretraining, argmax


# -- the callback --------------------------------------------------------------------------------
def _event_callback(emit: Callable[[TrainingEvent], None], should_stop: Callable[[], bool],
                    samples_per_step: int) -> Any:
    from transformers import TrainerCallback

    class _Callback(TrainerCallback):
        """Trainer's logs as TrainingEvents; a stop request ends the run after this step and saves."""

        def __init__(self) -> None:
            self.stopped = False
            self.started = time.perf_counter()
            self.first_step = 0

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.started, self.first_step = time.perf_counter(), state.global_step

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if should_stop():
                self.stopped = True
                control.should_training_stop = True
                control.should_save = True  # a resumable checkpoint of what was trained

        def _timing(self, state: Any) -> tuple[float | None, float | None, float]:
            elapsed = time.perf_counter() - self.started
            done = state.global_step - self.first_step
            if done <= 0 or elapsed <= 0:
                return None, None, elapsed
            per_step = elapsed / done
            return samples_per_step * done / elapsed, per_step * max(0, state.max_steps - state.global_step), elapsed

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None,
                   **kwargs: Any) -> None:
            logs = logs or {}
            rate, eta, elapsed = self._timing(state)
            common = dict(step=state.global_step, max_steps=state.max_steps, epoch=logs.get("epoch", state.epoch),
                          samples_per_second=rate, eta_seconds=eta, elapsed_seconds=elapsed)
            if "loss" in logs:
                emit(TrainingEvent("step", loss=float(logs["loss"]), learning_rate=logs.get("learning_rate"),
                                   grad_norm=logs.get("grad_norm"), **common))
            elif any(k.startswith("eval_") for k in logs):
                metrics = {k[5:]: float(v) for k, v in logs.items()
                           if k.startswith("eval_") and isinstance(v, int | float)
                           and not k.endswith(("_runtime", "_per_second"))}
                emit(TrainingEvent("eval", metrics=metrics, **common))

    return _Callback()


# -- saving --------------------------------------------------------------------------------------
def checkpoints_dir(output_dir: str | Path) -> Path:
    """Resumable Trainer checkpoints and the live event log, beside the model folder."""
    output = Path(output_dir).expanduser().resolve()
    return output.with_name(output.name + ".checkpoints")


def _replace_folder(partial: Path, final: Path) -> None:
    """Put the finished folder in place by renames only, so `final` is never half-written."""
    old = final.with_name(final.name + f".old-{os.getpid()}")
    if final.exists():
        final.rename(old)
    partial.rename(final)
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)


# -- the run -------------------------------------------------------------------------------------
def train(config: TrainConfig, control: TaskControl | None = None,
          stop_event: threading.Event | None = None) -> TrainResult:
    """Run a training job to the end (or to a stop request) and save the model atomically.

    Stops after the current step when `control.stop_requested` (the runner cancelled) or
    `stop_event` (the user's Stop: the result still comes back) is set; both save.
    """
    control = control or TaskControl()
    config.validate()
    output = Path(config.output_dir).expanduser().resolve()
    ckpt_dir = checkpoints_dir(output)
    resume_from = None
    if config.resume:
        from transformers.trainer_utils import get_last_checkpoint

        resume_from = get_last_checkpoint(str(ckpt_dir)) if ckpt_dir.is_dir() else None
        if resume_from is None:
            raise InputError(f"There is no checkpoint to resume in {ckpt_dir}.",
                             hint="Start a new run (a stopped run leaves one).")

    control.report("Reading the data…")
    model_nsp = True
    if config.task == "pretraining" and config.model:
        from bertstudio.core.models import resolve_source

        model_nsp = _pretraining_class(resolve_source(config.model, control))[1]
    data = _read_data(config, nsp=model_nsp)
    control.check()
    model, tokenizer, nsp = _load_model(config, data.labels, control)
    control.check()
    limit = _model_limit(model, tokenizer)
    if config.max_length > limit:
        raise InputError(f"The maximum length {config.max_length} is longer than this model allows ({limit}).",
                         hint=f"Choose {limit} or less.")
    control.report("Tokenizing…")
    train_rows, lengths = _encode(config.task, tokenizer, data.train, data.labels, config.max_length, nsp)
    eval_rows = (_encode(config.task, tokenizer, data.eval, data.labels, config.max_length, nsp)[0]
                 if data.eval is not None else None)
    summary: LengthSummary = data_mod.length_summary(lengths, config.max_length)
    total, warmup, _per_epoch = plan_steps(len(train_rows), config)
    control.check()

    from bertstudio.core.training.schedules import decay_split

    decayed, tensors = decay_split(model)
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    log_path = ckpt_dir / EVENTS_FILE
    main = int(os.environ.get("RANK", "0")) == 0  # under accelerate launch / torchrun only rank 0 reports
    log_file = log_path.open("a" if resume_from else "w", encoding="utf-8") if main else open(os.devnull, "w")  # noqa: SIM115
    lock = threading.Lock()

    def emit(event: TrainingEvent) -> None:
        if not main:
            return
        with lock:
            log_file.write(json.dumps(event.to_json()) + "\n")
            log_file.flush()
        fraction = event.step / event.max_steps if event.max_steps else None
        control.report(_describe(event), fraction, payload=event)

    emit(TrainingEvent(
        "plan", step=0, max_steps=total,
        message=(f"{len(train_rows)} training and {len(eval_rows or [])} validation examples; {total} steps, "
                 f"{warmup} warmup; weight decay applies to {decayed} of {tensors} parameter tensors. "
                 f"{summary.message}"),
        metrics={"train_examples": len(train_rows), "eval_examples": len(eval_rows or []),
                 "warmup_steps": warmup, "decay_tensors": decayed, "parameter_tensors": tensors,
                 "truncated": summary.truncated, "longest": summary.longest},
    ))
    try:
        trainer = _trainer(config, model, tokenizer, train_rows, eval_rows, data.labels, nsp, total, warmup, ckpt_dir)
        callback = _event_callback(
            emit, lambda: control.stop_requested or bool(stop_event and stop_event.is_set()),
            config.samples_per_step * max(1, trainer.args.world_size),
        )
        trainer.add_callback(callback)
        control.report("Training…", 0.0)
        try:
            output_metrics = trainer.train(resume_from_checkpoint=resume_from).metrics
        except RuntimeError as error:
            from bertstudio.core import devices

            if devices.is_out_of_memory(error):
                raise DeviceError("The device ran out of memory while training.",
                                  hint="Lower the batch size or maximum length, or train on the CPU.") from error
            raise
        metrics: dict[str, float] = {}
        if eval_rows:
            last = trainer.state.log_history[-1] if trainer.state.log_history else {}
            if not ("eval_loss" in last and last.get("step") == trainer.state.global_step):
                control.report("Evaluating…")
                last = trainer.evaluate()
            metrics = {k: float(v) for k, v in last.items()
                       if k.startswith("eval_") and not k.endswith(("_runtime", "_per_second"))}
        train_loss = [h["loss"] for h in trainer.state.log_history if "loss" in h]
        if train_loss:
            metrics["train_loss"] = float(train_loss[-1])
        for key in ("train_runtime", "train_samples_per_second"):
            if key in output_metrics:
                metrics[key] = float(output_metrics[key])
        step = trainer.state.global_step
        partial = output.with_name(output.name + ".partial")
        if main:
            control.report("Saving…")
            if partial.exists():
                shutil.rmtree(partial)
        trainer.accelerator.wait_for_everyone()
        trainer.save_model(str(partial))  # every process takes part (sharded models gather here)
        if main:
            tokenizer.save_pretrained(str(partial))
            (partial / "training_config.json").write_text(json.dumps(_jsonable(config), indent=2), encoding="utf-8")
            (partial / "metrics.json").write_text(json.dumps(metrics, indent=2), encoding="utf-8")
            done = TrainingEvent("done", step=step, max_steps=total, metrics=metrics, output_dir=str(output),
                                 message="Stopped early; saved what was trained." if callback.stopped else "Finished.")
            emit(done)
            log_file.flush()
            shutil.copyfile(log_path, partial / EVENTS_FILE)
            _replace_folder(partial, output)
    finally:
        log_file.close()
    if not callback.stopped and main:
        # a finished run leaves nothing to resume; keep the event log beside the model only
        shutil.rmtree(ckpt_dir, ignore_errors=True)
    return TrainResult(str(output), config.task, callback.stopped, step, total, metrics,
                       OPEN_IN[config.task] if nsp or config.task != "pretraining" else ("fill-mask",),
                       str(output / EVENTS_FILE))


def _jsonable(config: TrainConfig) -> dict[str, Any]:
    return json.loads(json.dumps(asdict(config), default=str))


def _describe(event: TrainingEvent) -> str:
    if event.kind == "step":
        return f"step {event.step}/{event.max_steps}  loss {event.loss:.4f}"
    if event.kind == "eval":
        return f"step {event.step}: " + ", ".join(f"{k} {v:.4f}" for k, v in event.metrics.items())
    return event.message or event.kind


def training_arguments(config: TrainConfig, total: int, warmup: int, output_dir: Path, evaluate: bool) -> Any:
    """TrainingArguments for the run (also used by the benchmark's plain Trainer)."""
    from transformers import TrainingArguments

    return TrainingArguments(
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
        use_cpu=config.device.startswith("cpu"), report_to="none", disable_tqdm=True,
        dataloader_num_workers=0, optim="adamw_torch",
    )


def _trainer(config: TrainConfig, model: Any, tokenizer: Any, train_rows: list, eval_rows: list | None,
             labels: list[str], nsp: bool, total: int, warmup: int, ckpt_dir: Path) -> Any:
    from transformers import (
        DataCollatorForLanguageModeling,
        DataCollatorForTokenClassification,
        DataCollatorWithPadding,
        PrinterCallback,
        ProgressCallback,
        Trainer,
    )

    if config.task == "text-classification":
        collator: Any = DataCollatorWithPadding(tokenizer)
    elif config.task == "token-classification":
        collator = DataCollatorForTokenClassification(tokenizer)
    else:
        if tokenizer.mask_token is None:
            raise InputError("This tokenizer has no mask token, so it cannot be pre-trained with masked LM.")
        collator = DataCollatorForLanguageModeling(tokenizer, mlm=True, mlm_probability=0.15)
    compute_metrics, preprocess = _metrics_for(config.task, labels, nsp)
    args = training_arguments(config, total, warmup, ckpt_dir, evaluate=bool(eval_rows))
    trainer = Trainer(
        model=model, args=args, train_dataset=train_rows, eval_dataset=eval_rows or None,
        data_collator=collator, processing_class=tokenizer,
        compute_metrics=compute_metrics if eval_rows else None,
        preprocess_logits_for_metrics=preprocess if eval_rows else None,
    )
    # stdout stays pure for `--json`: events come out through our callback only
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    return trainer
