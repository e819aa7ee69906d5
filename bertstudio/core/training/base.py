"""What every trainable task is (`TrainableTask`) and the data it hands the engine. Each task's own
trainables live in its package (core/tasks/<task>/train.py) and build on this module; the registry
(trainable.py, `TRAINABLE`) reads them from the specs (`TaskSpec.trainables`), so this module names
no task and imports no spec.

The run's settings are typed `Config` here (training/config.py's TrainConfig at run time): config.py
lists the registry's keys as its --task choices, so nothing below the registry imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from bertstudio.core.errors import InputError, ModelSourceError
from bertstudio.core.progress import TaskControl
from bertstudio.core.training import data as data_mod
from bertstudio.core.training import metrics
from bertstudio.core.training.metrics import Metrics

Config = Any  # training/config.py's TrainConfig (see the module docstring)


@dataclass
class Data:
    train: Any  # the task's rows: a LabelledData table, CoNLL sentences, sentence pairs...
    eval: Any
    labels: list[str] = field(default_factory=list)
    notes: tuple[str, ...] = ()


def load_model_class(cls: Any, folder: Path, **kwargs: Any) -> Any:
    """from_pretrained with every failure (corrupt weights, custom code, pickles) as one message."""
    try:
        return cls.from_pretrained(folder, trust_remote_code=False, **kwargs)
    except Exception as error:  # noqa: BLE001 - any loader failure is the model's, told in one line
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ModelSourceError(f"The model in '{folder}' cannot be loaded for training: {first[:200]}",
                               hint="Choose a complete model folder (config.json and safetensors weights).",
                               details=repr(error)) from error


def held_out(items: list, config: Config) -> tuple[list, list | None]:
    share = 0.0 if config.eval_file else config.eval_share
    if share <= 0 or len(items) < 2:
        return items, None
    keep, held = data_mod.split_indices(len(items), share, config.seed)
    return [items[i] for i in keep], [items[i] for i in held]


def train_and_validation(config: Config, read: Callable[[Any], list]) -> tuple[list, list | None]:
    """The training rows and the validation rows: the eval file's when one is given, else a
    held-out share of the training file (None when there is no share). One rule for every
    trainer whose rows are a plain list."""
    rows = read(config.train_file)
    if config.eval_file:
        return rows, read(config.eval_file)
    return held_out(rows, config)


def specs_with_heads(heads: tuple[str, ...]) -> tuple[str, ...]:
    """The keys of the task specs whose model class is one of `heads`, in the order of `heads`."""
    from bertstudio.core.tasks.spec import all_specs

    return tuple(spec.key for head in heads for spec in all_specs().values() if spec.model_class == head)


class TrainableTask:
    """The base: a `--task` key, what the form says, where its result opens, the steps the engine calls."""

    key: ClassVar[str]  # the `train --task` value and the run folder's marker
    order: ClassVar[int]  # where the Train form and `train --task` list it, smaller first
    command: ClassVar[str] = ""  # the name the other commands give the task (classify, ner), where not `key`
    title: ClassVar[str]  # what the Train form lists
    demo_files: ClassVar[tuple[str, str]]  # (training, validation or "") under resources/datasets
    auto_class: ClassVar[str] = ""  # the transformers Auto class of the head
    from_scratch: ClassVar[bool] = False  # may start from nothing (a new vocabulary and model)
    columns: ClassVar[bool] = False  # reads named columns of a table (the form offers them)
    # The Auto classes whose heads the saved model carries (default: `auto_class`), the first one
    # first: Evaluate scores the result as the first task it opens in.
    heads: ClassVar[tuple[str, ...]] = ()
    # The validation metric early stopping watches and the best model is chosen by: (name, higher is better).
    best_metric: ClassVar[tuple[str, bool]] = ("loss", False)
    weighted_loss: ClassVar[bool] = False  # a classifier's loss: --multi-label, --class-weights, --loss focal

    @property
    def cli_name(self) -> str:
        """The `train --task` name --help shows: the one every other command uses for the task."""
        return self.command or self.key

    @property
    def open_in(self) -> tuple[str, ...]:
        """The task specs that can load the saved model (every head it may carry)."""
        return specs_with_heads(self.heads or (self.auto_class,))

    def read(self, config: Config, nsp: bool = True) -> Data:
        raise NotImplementedError

    def reads_pairs(self, config: Config, control: TaskControl) -> bool:
        """What `read`'s `nsp` should be for this run's base model (pre-training asks the model whether it
        has a next-sentence head); every other task reads its data the same way for any model."""
        return True

    def load(self, folder: Path, config: Config, labels: list[str], tokenizer: Any) -> tuple[Any, bool]:
        """(model with this task's head, whether it trains next-sentence prediction)."""
        import transformers

        id2label = dict(enumerate(labels))
        auto = getattr(transformers, self.auto_class)
        model = load_model_class(auto, folder, num_labels=len(labels), id2label=id2label,
                                 label2id={v: k for k, v in id2label.items()}, ignore_mismatched_sizes=True)
        return model, False

    def scratch(self, config: Config) -> tuple[Any, Any]:
        """(model, tokenizer) built from nothing: only pre-training can."""
        raise InputError("Only pre-training can start from scratch.", hint="Choose a base model.")

    def encode(self, tokenizer: Any, rows: Any, labels: list[str], max_length: int,
               nsp: bool, control: TaskControl | None = None) -> tuple[list[dict[str, Any]], list[int]]:
        raise NotImplementedError

    def collator(self, tokenizer: Any) -> Any:
        raise NotImplementedError

    def metrics(self, labels: list[str], nsp: bool) -> metrics.Metrics:
        raise NotImplementedError

    def evaluation(self, data: Data, eval_rows: list[dict[str, Any]], nsp: bool) -> tuple[Metrics, Any]:
        """(Trainer's compute_metrics, its preprocess_logits_for_metrics): scores from argmax ids by
        default; a task whose score needs the logits themselves (QA spans) or its encoded rows overrides."""
        return self.metrics(data.labels, nsp), metrics.argmax

    def trainer_class(self, base: type) -> type:
        """The Trainer class the engine builds (distillation overrides compute_loss in a subclass)."""
        return base

    def planned_examples(self, config: Config, data: Data) -> int:
        """How many training rows the plan counts steps for (QA: one per window of a long context)."""
        return len(data.train)

    def label_counts(self, rows: Any) -> dict[str, int]:
        """Rows per label of one split (the model card's distribution); none for a task without row labels."""
        return {}

    def opens_in(self, nsp: bool) -> tuple[str, ...]:
        """The task specs that can load the model this run saved."""
        return self.open_in
