"""Distillation: a fine-tuned sequence classifier (the teacher) teaches a smaller student.

The student is the teacher (or `--model`) cut to N layers, initialised from the teacher's own
layers as DistilBERT was (every other layer where N divides the depth, else an even spread from
the first to the last; embeddings and head copied), or any smaller checkpoint with the same
labels. The loss is Hinton et al.'s: KL divergence between the softened distributions at
temperature T, scaled by T^2 so its gradients keep their size as T changes, mixed with the
hard-label cross-entropy: `alpha * KL * T^2 + (1 - alpha) * CE`. Underneath it is Trainer (a
subclass that overrides `compute_loss`; the teacher in eval mode, without gradients, on the
student's device), so the LR plan, live loss, Stop/save/resume, the guards and torchrun are
the engine's. Validation reports the student's accuracy, the teacher's, and how often the
student's top-1 agrees with the teacher's.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bertstudio.core.errors import InputError, ModelSourceError
from bertstudio.core.tasks.classification.train import TextClassification
from bertstudio.core.training import data as data_mod
from bertstudio.core.training import metrics
from bertstudio.core.training.base import Data, load_model_class

if TYPE_CHECKING:  # TrainConfig at run time: config.py lists the registry, so this module cannot import it
    from bertstudio.core.training.base import Config as TrainConfig

_LAYER_KEY = re.compile(r"(^|\.)layer\.(\d+)\.")  # encoder layer i in BERT, RoBERTa, ELECTRA, DistilBERT keys
_DEFAULT_LABEL = re.compile(r"^LABEL_\d+$")  # transformers' names for labels nobody named (no trained head)


def chosen_layers(total: int, keep: int) -> list[int]:
    """Which of the teacher's `total` layers initialise a `keep`-layer student.

    DistilBERT's rule where `keep` divides `total` (every other layer of 12 for 6: 0, 2, ..., 10);
    otherwise an even spread that keeps the first and the last layer."""
    if not 1 <= keep <= total:
        raise InputError(f"The student cannot have {keep} layers: the teacher has {total}.",
                         hint=f"Choose 1 to {total} student layers.")
    if total % keep == 0:
        return list(range(0, total, total // keep))
    if keep == 1:
        return [0]
    return [round(i * (total - 1) / (keep - 1)) for i in range(keep)]


def cut_layers(model: Any, keep: int) -> tuple[Any, list[int]]:
    """A new model of the same class with `keep` of `model`'s layers (and everything else) copied.

    ALBERT shares one set of layer weights across its depth, so it simply runs fewer passes."""
    config = model.config.__class__.from_dict(model.config.to_dict())
    total = int(config.num_hidden_layers)
    chosen = chosen_layers(total, keep)
    config.num_hidden_layers = keep
    student = type(model)(config)
    position = {teacher: student_index for student_index, teacher in enumerate(chosen)}
    state = {}
    for key, tensor in model.state_dict().items():
        found = _LAYER_KEY.search(key)
        if found is None:
            state[key] = tensor.clone()
        elif int(found.group(2)) in position:
            start, end = found.span(2)
            state[key[:start] + str(position[int(found.group(2))]) + key[end:]] = tensor.clone()
    student.load_state_dict(state, strict=True)
    return student, chosen


def distillation_loss(student: Any, teacher: Any, labels: Any, temperature: float, alpha: float) -> Any:
    """alpha * KL(teacher_T || student_T) * T^2 + (1 - alpha) * CE(student, labels), batch means."""
    import torch.nn.functional as F  # noqa: N812 - torch's own name

    soft = F.kl_div(F.log_softmax(student / temperature, dim=-1), F.log_softmax(teacher / temperature, dim=-1),
                    reduction="batchmean", log_target=True) * temperature ** 2
    if labels is None or alpha >= 1.0:
        return soft
    return alpha * soft + (1.0 - alpha) * F.cross_entropy(student, labels, ignore_index=-100)


def _labels_of(config: dict[str, Any]) -> tuple[list[str], bool]:
    """(labels in id order, whether a trained sequence-classification head carries them)."""
    raw = config.get("id2label") or {}
    labels = [str(raw[k]) for k in sorted(raw, key=lambda k: int(k))] if isinstance(raw, dict) else []
    trained = any(str(a).endswith("ForSequenceClassification") for a in config.get("architectures") or [])
    return labels, trained and bool(labels) and not all(_DEFAULT_LABEL.match(label) for label in labels)


def _config_of(source: str) -> tuple[Path, dict[str, Any]]:
    from bertstudio.core.model_folder import read_config
    from bertstudio.core.models import resolve_source

    folder = resolve_source(source)
    return folder, read_config(folder)


@dataclass
class Teacher:
    """The teacher of one run, bound to its student until the Trainer takes it."""

    model: Any
    order: list[int]  # the teacher's logit column for each of the student's labels
    temperature: float
    alpha: float
    inputs: tuple[str, ...]  # what the teacher's forward takes (DistilBERT has no token_type_ids)

    def logits(self, inputs: dict[str, Any], device: Any) -> Any:
        import torch

        if self.model.device != device:
            self.model.to(device)
        with torch.no_grad():
            out = self.model(**{k: v for k, v in inputs.items() if k in self.inputs}).logits
        return out[:, self.order]


_TEACHERS: weakref.WeakKeyDictionary[Any, Teacher] = weakref.WeakKeyDictionary()  # student -> its teacher


class Distillation(TextClassification):
    key = "distill"
    order = 70
    command = ""  # its own name, not the classifier's it builds on
    title = "Distillation: a smaller student of a classifier (CSV / TSV / JSONL)"
    demo_files = ("reviews_train.csv", "reviews_eval.csv")
    weighted_loss = False  # the distillation loss is its own (no class weights, focal or multi-label)
    best_metric = ("accuracy", True)  # the student's (teacher_student_metrics has no macro F1)
    distils = True  # has a teacher: DistillConfig settings, teacher vs student in the Train tab

    def read(self, config: TrainConfig, nsp: bool = True) -> Data:
        """The classification file, its labels checked against the teacher's (and the student's head)."""
        settings = config.distill
        if settings is None:
            raise InputError("Distillation needs a teacher.", hint="Name it with --teacher.")
        settings.validate()
        data = super().read(config, nsp)
        teacher_labels, trained = _labels_of(_config_of(settings.teacher)[1])
        if not trained or len(teacher_labels) < 2:
            raise InputError(f"The teacher '{settings.teacher}' is not a fine-tuned sequence classifier (no trained "
                             "classification head with named labels).",
                             hint="Distil a classifier fine-tuned in the Train tab (text classification).")
        labels = teacher_labels
        student_labels, student_trained = _labels_of(_config_of(config.model)[1])
        if student_trained:
            if set(student_labels) != set(teacher_labels):
                raise InputError(f"The student's labels ({', '.join(student_labels)}) are not the teacher's "
                                 f"({', '.join(teacher_labels)}).",
                                 hint="Choose a student with the same labels, or a plain encoder (a new head is made).")
            labels = student_labels  # the student keeps its head; the teacher's columns are reordered to it
        unknown = [data_mod.RowIssue(line, f"label '{label}' is not one of the teacher's ({', '.join(labels)})")
                   for rows in (data.train, data.eval) if rows is not None
                   for label, line in zip(rows.labels, rows.lines, strict=True) if label not in labels]
        data_mod.raise_issues(Path(config.train_file), unknown)
        return replace(data, labels=labels)

    def load(self, folder: Path, config: TrainConfig, labels: list[str], tokenizer: Any) -> tuple[Any, bool]:
        """The student (cut from `folder`'s model or as it is) and, bound to it, the teacher."""
        import inspect

        import transformers

        settings = config.distill
        assert settings is not None
        student, _nsp = super().load(folder, config, labels, tokenizer)
        if settings.student_layers:
            student, _chosen = cut_layers(student, settings.student_layers)
        teacher_folder, _ = _config_of(settings.teacher)
        teacher = load_model_class(transformers.AutoModelForSequenceClassification, teacher_folder)
        teacher_tokenizer = transformers.AutoTokenizer.from_pretrained(teacher_folder, trust_remote_code=False)
        if teacher_tokenizer.get_vocab() != tokenizer.get_vocab():
            raise ModelSourceError("The student and the teacher tokenize differently (their vocabularies differ), "
                                   "so the teacher's soft targets would be for other token ids.",
                                   hint="Choose a student with the teacher's tokenizer, or --student-layers.")
        teacher.eval().requires_grad_(False)
        teacher_index = {str(label): int(i) for i, label in teacher.config.id2label.items()}
        accepted = tuple(inspect.signature(teacher.forward).parameters)
        _TEACHERS[student] = Teacher(teacher, [teacher_index[label] for label in labels], settings.temperature,
                                     settings.alpha, accepted)
        return student, False

    def trainer_class(self, base: type) -> type:
        return distillation_trainer(base)

    def evaluation(self, data: Data, eval_rows: list[dict[str, Any]], nsp: bool) -> tuple[metrics.Metrics, Any]:
        return teacher_student_metrics, metrics.argmax


def teacher_student_metrics(pred: Any) -> dict[str, float]:
    """Student accuracy, teacher accuracy and top-1 agreement on the validation rows."""
    import numpy as np

    student, teacher = (np.asarray(p) for p in pred.predictions)
    gold = np.asarray(pred.label_ids)
    return {"accuracy": float((student == gold).mean()), "teacher_accuracy": float((teacher == gold).mean()),
            "agreement": float((student == teacher).mean())}


def distillation_trainer(base: type) -> type:
    """`base` (Trainer) with the distillation loss; the teacher comes from the student it was bound to."""

    class DistillationTrainer(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.teacher = _TEACHERS.pop(self.model)
            self.model_accepts_loss_kwargs = False  # our loss is a batch mean: Trainer scales it for accumulation

        def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                         num_items_in_batch: Any = None) -> Any:
            inputs = dict(inputs)
            labels = inputs.pop("labels", None)
            logits = model(**inputs).logits
            teacher = self.teacher.logits(inputs, logits.device)
            loss = distillation_loss(logits, teacher, labels, self.teacher.temperature, self.teacher.alpha)
            return (loss, {"logits": logits, "teacher_logits": teacher}) if return_outputs else loss

    return DistillationTrainer
