"""Fine-tuning a sequence classifier on a labelled table (CSV / TSV / JSONL: a text or a pair, a label):
the Train task the classification spec lists first (`TaskSpec.trainables`). Regression and
distillation build on the same head (train_regression.py, train_distill.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.classification import imbalance, multilabel
from bertstudio.core.training import data as data_mod
from bertstudio.core.training.base import Config, Data, TrainableTask, load_model_class
from bertstudio.core.training.metrics import Metrics


def class_metrics(labels: Sequence[str]) -> Metrics:
    """Accuracy and macro F1 over the classes."""
    import numpy as np

    def compute(pred: Any) -> dict[str, float]:
        predicted, gold = np.asarray(pred.predictions), np.asarray(pred.label_ids)
        f1s = []
        for k in range(len(labels)):
            tp = float(((predicted == k) & (gold == k)).sum())
            fp, fn = float(((predicted == k) & (gold != k)).sum()), float(((predicted != k) & (gold == k)).sum())
            f1s.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
        return {"accuracy": float((predicted == gold).mean()), "macro_f1": float(np.mean(f1s))}

    return compute


class TextClassification(TrainableTask):
    key = "text-classification"
    order = 10
    command = "classify"  # the classification spec's CLI name (test_task_packages checks it)
    title = "Text classification (CSV / TSV / JSONL)"
    demo_files = ("reviews_train.csv", "reviews_eval.csv")
    columns = True
    auto_class = "AutoModelForSequenceClassification"

    best_metric = ("macro_f1", True)  # early stopping and the best model kept: (validation metric, higher is better)
    weighted_loss = True  # --class-weights, --loss focal and --multi-label apply

    def read(self, config: Config, nsp: bool = True) -> Data:
        multi = bool(getattr(config, "multi_label", False))
        # a single-label file is read with its empty cells first, so `a|b` cells are said to be multi-label
        train = data_mod.read_labelled(config.train_file, config.columns, multi_label=multi, empty_labels=True)
        if not multi:
            multilabel.refuse_separator(config.train_file, train.labels, train.lines)
            data_mod.raise_issues(Path(config.train_file), [
                data_mod.RowIssue(line, f"empty label in column '{train.columns.label}'")
                for label, line in zip(train.labels, train.lines, strict=True) if not label])
        evaluation = (data_mod.read_labelled(config.eval_file, train.columns, multi_label=multi)
                      if config.eval_file else None)
        counts = multilabel.label_counts(train.labels, multi)
        once = multilabel.single_examples(counts)
        if once and (multi or config.class_weights != "none" or config.loss != "cross-entropy"):
            multilabel.refuse_single_examples(config.train_file, once)  # a weight or a label from one row
        share = 0.0 if config.eval_file else config.eval_share
        if evaluation is None and share > 0 and len(train) > 1:
            keep, held = data_mod.split_indices(len(train), share, config.seed)
            train, evaluation = train.subset(keep), train.subset(held)
        labels = sorted(counts)
        data_mod.check_label_count(config.train_file, labels)
        if evaluation is not None:
            unknown = [data_mod.RowIssue(line, f"label '{label}' never occurs in the training data")
                       for cell, line in zip(evaluation.labels, evaluation.lines, strict=True)
                       for label in (multilabel.split_labels(cell) if multi else (cell,)) if label not in labels]
            data_mod.raise_issues(Path(config.eval_file or config.train_file), unknown)
        if len(labels) < 2:
            raise InputError("Text classification needs at least two different labels in the training data.")
        notes: tuple[str, ...] = ()
        if train.merged_labels and not multi:
            notes = (f"Numeric labels were normalised: {', '.join(repr(x) for x in train.merged_labels)} "
                     f"count as the same class as their plain number.",)
        if once:
            notes += (f"The label(s) {', '.join(repr(x) for x in once[:5])} appear on only one row.",)
        return Data(train, evaluation, labels, notes)

    def load(self, folder: Path, config: Config, labels: list[str], tokenizer: Any) -> tuple[Any, bool]:
        """The head for our labels (multi-label: problem_type makes transformers use sigmoid and BCE), with
        the run's loss settings bound to it for the Trainer (imbalance.py)."""
        import transformers

        id2label = dict(enumerate(labels))
        extra = {"problem_type": multilabel.PROBLEM_TYPE} if getattr(config, "multi_label", False) else {}
        model = load_model_class(getattr(transformers, self.auto_class), folder, num_labels=len(labels),
                                 id2label=id2label, label2id={v: k for k, v in id2label.items()},
                                 ignore_mismatched_sizes=True, **extra)
        if self.weighted_loss:
            imbalance.bind(model, config)
        return model, False

    def encode(self, tokenizer: Any, rows: Any, labels: list[str], max_length: int,
               nsp: bool, control: TaskControl | None = None) -> tuple[list[dict[str, Any]], list[int]]:
        index = {label: i for i, label in enumerate(labels)}
        args = (list(rows.texts), list(rows.pairs)) if rows.pairs is not None else (list(rows.texts),)
        encoded = tokenizer(*args, truncation=True, max_length=max_length)
        lengths = [len(ids) for ids in tokenizer(*args)["input_ids"]]
        targets: list[Any] = [index[label] for label in rows.labels] if not rows.multi_label else \
            multilabel.binarize(rows.labels, labels)[0].astype("float32").tolist()
        examples = [{**{key: encoded[key][i] for key in encoded}, "labels": target}
                    for i, target in enumerate(targets)]
        return examples, lengths

    def collator(self, tokenizer: Any) -> Any:
        from transformers import DataCollatorWithPadding

        return DataCollatorWithPadding(tokenizer)

    def metrics(self, labels: list[str], nsp: bool) -> Metrics:
        return class_metrics(labels)

    def evaluation(self, data: Data, eval_rows: list[dict[str, Any]], nsp: bool) -> tuple[Metrics, Any]:
        """Multi-label rows keep their logits (sigmoid per label); single-label ones are reduced to argmax."""
        if eval_rows and isinstance(eval_rows[0]["labels"], list):
            return multilabel.training_metrics, None
        return super().evaluation(data, eval_rows, nsp)

    def trainer_class(self, base: type) -> type:
        return imbalance.loss_trainer(base)

    def label_counts(self, rows: Any) -> dict[str, int]:
        """A multi-label row counts once for each of its labels."""
        return dict(sorted(multilabel.label_counts(rows.labels, rows.multi_label).items()))

