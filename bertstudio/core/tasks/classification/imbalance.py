"""Imbalanced labels: class weights (scikit-learn's `compute_class_weight("balanced")`; multi-label:
BCE's `pos_weight`, negatives / positives per label) and the focal loss (Lin et al. 2017), for single-
and multi-label heads, through a Trainer subclass that overrides `compute_loss` (the classification
trainable's `trainer_class`). The run's settings are bound to the model it loads (as distillation binds
its teacher), so the engine passes nothing new; the weights come from the encoded training rows.

Also the label distribution the Train form shows before Start, with its advice.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.tasks.classification import multilabel

IMBALANCE_RATIO = 5.0  # the largest class over the smallest above this: balanced weights are suggested


@dataclass(frozen=True)
class LossSettings:
    class_weights: str  # "none" or "balanced"
    loss: str  # "cross-entropy" or "focal"
    gamma: float
    multi_label: bool

    @property
    def plain(self) -> bool:
        """transformers' own loss does it (softmax CE, or BCE from problem_type)."""
        return self.class_weights == "none" and self.loss == "cross-entropy"


_BOUND: weakref.WeakKeyDictionary[Any, LossSettings] = weakref.WeakKeyDictionary()


def bind(model: Any, config: Any) -> None:
    """Remember the run's loss settings for the Trainer that will train `model`."""
    _BOUND[model] = LossSettings(config.class_weights, config.loss, float(config.focal_gamma),
                                 bool(config.multi_label))


def _bound(model: Any) -> LossSettings | None:
    found = _BOUND.get(model)
    base = getattr(model, "get_base_model", None)  # a LoRA (peft) model wraps the one that was bound
    return found if found is not None or base is None else _BOUND.get(base())


def class_weights(labels: Sequence[int], classes: int) -> Any:
    """scikit-learn's balanced weights, n / (classes x count); a class absent from the rows gets 1."""
    import numpy as np
    from sklearn.utils.class_weight import compute_class_weight

    values = np.asarray(labels, dtype=np.int64)
    present = np.unique(values)
    weights = np.ones(classes, dtype=np.float64)
    weights[present] = compute_class_weight("balanced", classes=present, y=values)
    return weights


def positive_weights(matrix: Any) -> Any:
    """Per label, negatives / positives (BCEWithLogitsLoss's pos_weight); 1 where a label never occurs."""
    import numpy as np

    values = np.asarray(matrix, dtype=np.float64)
    positives = values.sum(axis=0)
    negatives = len(values) - positives
    return np.where(positives > 0, negatives / np.maximum(positives, 1.0), 1.0)


def weights_of(rows: Sequence[dict[str, Any]], classes: int, multi_label: bool) -> Any:
    """The balanced weights of the encoded training rows (their "labels")."""
    labels = [row["labels"] for row in rows]
    return positive_weights(labels) if multi_label else class_weights(labels, classes)


def classification_loss(logits: Any, labels: Any, settings: LossSettings, weights: Any | None) -> Any:
    """Weighted cross-entropy (softmax, or sigmoid per label), optionally focal: (1 - p_t)^gamma x CE."""
    import torch.nn.functional as functional

    if settings.multi_label:
        target = labels.to(logits.dtype)
        each = functional.binary_cross_entropy_with_logits(logits, target, pos_weight=weights, reduction="none")
        if settings.loss != "focal":
            return each.mean()
        probability = logits.sigmoid()
        p_t = probability * target + (1 - probability) * (1 - target)
        return ((1 - p_t) ** settings.gamma * each).mean()
    if settings.loss != "focal":
        return functional.cross_entropy(logits, labels, weight=weights)  # weighted: divided by the rows' weights
    each = functional.cross_entropy(logits, labels, weight=weights, reduction="none")
    p_t = (-functional.cross_entropy(logits, labels, reduction="none")).exp()
    return ((1 - p_t) ** settings.gamma * each).mean()


def loss_trainer(base: type) -> type:
    """`base` (Trainer) whose loss follows the settings bound to its model (plain ones: Trainer's own)."""

    class WeightedLossTrainer(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.loss_settings = _bound(self.model)
            self.class_weight_values: Any = None
            if self.loss_settings is not None and not self.loss_settings.plain:
                self.model_accepts_loss_kwargs = False  # our loss is a batch mean: Trainer scales it
                if self.loss_settings.class_weights == "balanced":
                    classes = int(self.model.config.num_labels)
                    self.class_weight_values = weights_of(self.train_dataset, classes, self.loss_settings.multi_label)

        def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                         num_items_in_batch: Any = None) -> Any:
            settings = self.loss_settings
            if settings is None or settings.plain or "labels" not in inputs:
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            import torch

            inputs = dict(inputs)
            labels = inputs.pop("labels")
            outputs = model(**inputs)
            weights = (None if self.class_weight_values is None else
                       torch.as_tensor(self.class_weight_values, dtype=outputs.logits.dtype,
                                       device=outputs.logits.device))
            loss = classification_loss(outputs.logits, labels, settings, weights)
            return (loss, outputs) if return_outputs else loss

    return WeightedLossTrainer


@dataclass(frozen=True)
class Distribution:
    """How many training rows carry each label, and whether balanced weights are worth suggesting."""

    counts: dict[str, int]
    rows: int
    multi_label: bool

    @property
    def ratio(self) -> float:
        """The largest class over the smallest (1.0 with fewer than two classes)."""
        values = [v for v in self.counts.values() if v > 0]
        return max(values) / min(values) if len(values) > 1 else 1.0

    @property
    def suggest_balanced(self) -> bool:
        return self.ratio > IMBALANCE_RATIO

    @property
    def advice(self) -> str:
        if not self.suggest_balanced:
            return ""
        top = max(self.counts, key=lambda k: self.counts[k])
        low = min(self.counts, key=lambda k: self.counts[k])
        return (f"'{top}' has {self.ratio:.1f}x the rows of '{low}': consider Class weights = balanced "
                "(or the focal loss).")


def label_distribution(path: str | Path, columns: Any = None, multi_label: bool | None = None) -> Distribution:
    """The training file's label counts (multi-label: rows per label; None: detected from `|`)."""
    from bertstudio.core.training.data import read_labelled

    data = read_labelled(path, columns, multi_label=bool(multi_label) or multi_label is None)
    if multi_label is None:
        multi_label = multilabel.has_separator(data.labels)
    counts = multilabel.label_counts(data.labels, multi_label)
    ordered = dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
    return Distribution(ordered, len(data), multi_label)
