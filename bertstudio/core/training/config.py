"""Every setting of a training run, once: the `train` CLI options and the Train form are both
generated from these fields' metadata (help, range, choices, widget), so the two cannot drift;
`TrainConfig.validate` checks every range from the same metadata before any model is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass

from bertstudio.core.errors import DeviceError, InputError
from bertstudio.core.training.data import Columns
from bertstudio.core.training.distill_config import DistillConfig
from bertstudio.core.training.options import opt, options
from bertstudio.core.training.schedules import SCHEDULERS
from bertstudio.core.training.scratch_config import ScratchConfig
from bertstudio.core.training.trainable import TRAINABLE

TASKS = tuple(TRAINABLE)  # the `--task` choices: one per trainable, none written here
# the names every other command gives a task (classify, ner) -> the trainable's key (text-classification)
TASK_ALIASES = {task.cli_name: key for key, task in TRAINABLE.items() if task.cli_name != key}
assert len({task.cli_name for task in TRAINABLE.values()}) == len(TRAINABLE), "two trainables share a --task name"


def task_key(name: str) -> str:
    """A task by either spelling, short (`classify`, as `evaluate --task` says) or long, as its key."""
    return TASK_ALIASES.get(name, name)
PRECISIONS = ("no", "fp16", "bf16")
CLASS_WEIGHTS = ("none", "balanced")
LOSSES = ("cross-entropy", "focal")


@dataclass(frozen=True)
class TrainConfig:
    """Every setting of a run: a plain object the tab builds and the CLI fills from arguments."""

    task: str = opt("text-classification", flag="--task", label="Task", widget="choice", choices=TASKS,
                    required=True, group="Data", help="what to train")
    train_file: str = opt("", flag="--train", label="Training file", widget="file", required=True, group="Data",
                          metavar="FILE",
                          help="CSV/TSV/JSONL (classification, regression, multiple choice), SQuAD JSON or "
                               "question/context/answer table (qa), CoNLL (token classification) "
                               "or plain text (pre-training)")
    output_dir: str = opt("", flag="--output", label="Output folder", widget="folder", required=True, group="Data",
                          metavar="DIR", help="new model folder to write (atomically; an existing folder that is "
                                              "not a BERT Studio run is never replaced)")
    model: str = opt("", flag="--model", label="Base model", widget="model", group="Data", metavar="SRC",
                     help="base model: Hub id or local folder (omit with --from-scratch)")
    eval_file: str | None = opt(None, flag="--eval", label="Validation file", widget="file", group="Data",
                                metavar="FILE", help="validation file (default: hold out --eval-share)")
    eval_share: float = opt(0.1, flag="--eval-share", label="Held-out share", widget="float", low=0.0, high=1.0,
                            high_open=True, decimals=2, step=0.05, group="Data",
                            help="share of the training file held out when there is no validation file "
                                 "(0 = none; default 0.1)")
    multi_label: bool = opt(False, flag="--multi-label", label="Multi-label", widget="check", group="Data",
                            help="multi-label: a label cell holds several labels separated by '|' (empty = none); "
                                 "sigmoid per label and binary cross-entropy")
    columns: Columns | None = None  # text classification: None means detected
    scratch: ScratchConfig | None = None  # pre-training from scratch
    distill: DistillConfig | None = None  # distillation: teacher, student size, temperature, mix
    scheduler: str = opt("linear", flag="--scheduler", label="Schedule", widget="choice", choices=SCHEDULERS,
                         group="Schedule", help="learning-rate schedule")
    warmup_steps: int = opt(0, flag="--warmup-steps", label="Warmup steps", widget="int", low=0, high=10_000_000,
                            group="Schedule", help="warmup in steps; wins over --warmup-ratio")
    warmup_ratio: float = opt(0.0, flag="--warmup-ratio", label="Warmup ratio", widget="float", low=0.0, high=1.0,
                              high_open=True, decimals=2, step=0.05, group="Schedule",
                              help="warmup as a share of all steps")
    epochs: float = opt(3.0, flag="--epochs", label="Epochs", widget="float", low=0.0, low_open=True, high=10_000,
                        decimals=1, step=1.0, group="Schedule", exclusive="length", help="passes over the data")
    max_steps: int = opt(0, flag="--max-steps", label="Max steps", widget="int", low=0, high=100_000_000,
                         group="Schedule", exclusive="length", help="exactly this many steps (> 0 overrides epochs)")
    batch_size: int = opt(16, flag="--batch-size", label="Batch size", widget="int", low=1, high=4096,
                          group="Schedule", help="examples per device and step")
    grad_accum: int = opt(1, flag="--grad-accum", label="Accumulation", widget="int", low=1, high=1024,
                          group="Schedule", help="gradient accumulation steps")
    learning_rate: float = opt(5e-5, flag="--lr", label="Learning rate", widget="float", low=0.0, low_open=True,
                               high=1.0, decimals=7, step=1e-5, group="Schedule",
                               help="peak learning rate (default 5e-5)")
    weight_decay: float = opt(0.01, flag="--weight-decay", label="Weight decay", widget="float", low=0.0, high=1.0,
                              decimals=4, step=0.01, group="Schedule", help="AdamW weight decay")
    seed: int = opt(42, flag="--seed", label="Seed", widget="int", low=0, high=2**31 - 1, group="Schedule",
                    help="random seed (data order, split, initialisation)")
    max_length: int = opt(128, flag="--max-length", label="Max length", widget="int", low=8, high=8192,
                          group="Schedule", help="maximum tokens per example; longer ones are truncated")
    eval_steps: int = opt(0, flag="--eval-steps", label="Evaluate every", widget="int", low=0, high=10_000_000,
                          group="Schedule", help="evaluate every N steps (default 0: at the end)")
    save_steps: int = opt(0, flag="--save-steps", label="Checkpoint every", widget="int", low=0, high=10_000_000,
                          group="Schedule", help="resumable checkpoint every N steps (0: only when stopped)")
    class_weights: str = opt("none", flag="--class-weights", label="Class weights", widget="choice",
                             choices=CLASS_WEIGHTS, group="Loss and stopping",
                             help="balanced: weigh each class by n / (classes x its count) (scikit-learn's "
                                  "compute_class_weight; multi-label: a positive weight per label)")
    loss: str = opt("cross-entropy", flag="--loss", label="Loss", widget="choice", choices=LOSSES,
                    group="Loss and stopping", help="classification loss: cross-entropy, or focal (down-weighs "
                                                    "easy examples; see --focal-gamma)")
    focal_gamma: float = opt(2.0, flag="--focal-gamma", label="Focal gamma", widget="float", low=0.0, high=100.0,
                             decimals=2, step=0.5, group="Loss and stopping",
                             help="focal loss: how much easy examples are down-weighed (0 = plain cross-entropy)")
    early_stopping: int = opt(0, flag="--early-stopping", label="Early stopping", widget="int", low=0, high=10_000,
                              group="Loss and stopping", metavar="PATIENCE",
                              help="stop after this many evaluations without a better validation score and keep "
                                   "the best model (needs validation data; default 0: off)")
    precision: str = opt("no", flag="--precision", label="Precision", widget="choice", choices=PRECISIONS,
                         group="Hardware", help="mixed precision (GPU only)")
    device: str = opt("cpu", flag="--device", label="Device", widget="device", group="Hardware",
                      help="cpu or cuda (default cpu); refused when not available")
    logging_steps: int = 1
    lora_rank: int = opt(0, flag="--lora", label="LoRA rank", widget="int", low=0, high=1024, group="Adapters (LoRA)",
                         metavar="RANK", help="train a LoRA adapter of this rank (peft) instead of every weight "
                                              "(default 0: full fine-tune)")
    lora_alpha: int = opt(16, flag="--lora-alpha", label="LoRA alpha", widget="int", low=1, high=100_000,
                          group="Adapters (LoRA)",
                          help="LoRA scaling alpha (the update is scaled by alpha / rank)")
    lora_dropout: float = opt(0.1, flag="--lora-dropout", label="LoRA dropout", widget="float", low=0.0, high=1.0,
                              high_open=True, decimals=2, step=0.05, group="Adapters (LoRA)",
                              help="dropout on the LoRA path")
    lora_targets: str = opt("query,value", flag="--lora-targets", label="LoRA targets", group="Adapters (LoRA)",
                            metavar="NAMES", help="encoder layers LoRA adapts: query,value (default), all-linear, "
                                                  "or comma-separated linear layer names")
    resume: bool = opt(False, flag="--resume", label="Resume", widget="check", group="Hardware",
                       help="continue from the last complete checkpoint of --output")
    overwrite: bool = opt(False, flag="--overwrite", label="Replace", widget="check", group="Hardware",
                          help="replace an earlier BERT Studio run in --output (other folders are never replaced)")

    def __post_init__(self) -> None:
        object.__setattr__(self, "task", task_key(self.task))  # `classify` is `text-classification`
        if self.distill is not None and self.distill.student_layers and not self.model:
            object.__setattr__(self, "model", self.distill.teacher)  # the student is cut from the teacher

    def validate(self) -> None:
        """Every check that needs no model and no data: run before anything is loaded."""
        for name, option, _default in options(TrainConfig):
            option.check(name, getattr(self, name))
        trainable = TRAINABLE.get(self.task)
        if not self.model and not (trainable is not None and trainable.from_scratch and self.scratch is not None):
            raise InputError("No base model chosen.",
                             hint="Choose a model folder or Hub id (or pre-train from scratch).")
        if not self.train_file:
            raise InputError("No training file chosen.", hint="Choose a data file (or the demo data).")
        if not self.output_dir:
            raise InputError("No output folder chosen.", hint="Choose where the trained model is saved.")
        if self.scratch is not None:
            self.scratch.validate()
        if self.distill is not None:
            self.distill.validate()
        from bertstudio.core.training.lora import check_run

        check_run(self, bool(getattr(trainable, "distils", False)))
        from bertstudio.core.training.early_stopping import check_settings

        check_settings(self, trainable)
        if self.precision != "no" and self.device.startswith("cpu"):
            raise DeviceError(f"{self.precision} training needs a GPU.", hint="Choose a CUDA device or full precision.")

    @property
    def samples_per_step(self) -> int:
        return self.batch_size * self.grad_accum
