"""Regression and similarity: a sequence head with one output (num_labels=1, problem_type
"regression", so transformers trains it with mean squared error) on a score per text or text
pair (STS-style sentence1, sentence2, score). Validation reports Pearson's and Spearman's
correlation between the gold scores and the predictions (scipy), as STS benchmarks do.

The saved model is a sequence classifier whose config says "regression": the Classification
tab and `classify` show its one value; its single label is named after the score column.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

from bertstudio.core.errors import InputError
from bertstudio.core.progress import TaskControl
from bertstudio.core.training import data as data_mod
from bertstudio.core.training import metrics as metrics_mod
from bertstudio.core.training.base import Config, Data, TrainableTask, load_model_class

# The largest score trained on, either sign. Bounded, not rescaled (the saved model predicts the
# scores as given): the squared error of a score beyond about 1.8e19 overflows 32-bit floats (the
# loss becomes inf and the weights NaN); 1e9 leaves that far behind and covers real-world scales.
MAX_ABS_SCORE = 1e9


def scores_of(path: Path, rows: data_mod.LabelledData) -> list[float]:
    """Every label a finite number within ±MAX_ABS_SCORE, or its line is named."""
    values: list[float] = []
    issues = []
    for label, line in zip(rows.labels, rows.lines, strict=True):
        try:
            value = float(label)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            issues.append(data_mod.RowIssue(line, f"score '{label}' is not a finite number"))
        elif abs(value) > MAX_ABS_SCORE:
            issues.append(data_mod.RowIssue(line, f"score {value:g} is outside ±{MAX_ABS_SCORE:g}, the range this "
                                                  "app trains on (its squared error would overflow); scale the "
                                                  "scores down, e.g. divide them all by a power of ten"))
        values.append(value)
    data_mod.raise_issues(path, issues)
    return values


def correlations(gold: Any, predicted: Any) -> dict[str, float]:
    """Pearson and Spearman (scipy); left out where undefined (fewer than two rows, a constant side)."""
    import numpy as np
    from scipy.stats import pearsonr, spearmanr

    gold, predicted = np.asarray(gold, float).ravel(), np.asarray(predicted, float).ravel()
    if len(gold) < 2 or np.ptp(gold) == 0 or np.ptp(predicted) == 0:
        return {}
    return {"pearson": float(pearsonr(gold, predicted)[0]), "spearman": float(spearmanr(gold, predicted)[0])}


def regression_metrics(pred: Any) -> dict[str, float]:
    return correlations(pred.label_ids, pred.predictions)


def one_value(logits: Any, _labels: Any) -> Any:
    """(batch, 1) predictions as (batch,)."""
    return logits[0].squeeze(-1) if isinstance(logits, tuple) else logits.squeeze(-1)


class Regression(TrainableTask):
    key: ClassVar[str] = "regression"
    order = 60
    title = "Regression / similarity score (CSV / TSV / JSONL: text or pair, score)"
    demo_files = ("sts_train.csv", "sts_eval.csv")
    columns = True
    auto_class = "AutoModelForSequenceClassification"

    def read(self, config: Config, nsp: bool = True) -> Data:
        path = Path(config.train_file)
        train = data_mod.read_labelled(path, config.columns)
        scores_of(path, train)
        evaluation = None
        if config.eval_file:
            evaluation = data_mod.read_labelled(config.eval_file, train.columns)
            scores_of(Path(config.eval_file), evaluation)
        elif config.eval_share > 0 and len(train) > 1:
            keep, held = data_mod.split_indices(len(train), config.eval_share, config.seed)
            train, evaluation = train.subset(keep), train.subset(held)
        if len(train) < 2:
            raise InputError("Regression needs at least two training rows.")
        return Data(train, evaluation, [train.columns.label])

    def load(self, folder: Path, config: Config, labels: list[str], tokenizer: Any) -> tuple[Any, bool]:
        import transformers

        name = labels[0] if labels else "score"
        model = load_model_class(transformers.AutoModelForSequenceClassification, folder, num_labels=1,
                                 problem_type="regression", id2label={0: name}, label2id={name: 0},
                                 ignore_mismatched_sizes=True)
        return model, False

    def encode(self, tokenizer: Any, rows: Any, labels: list[str], max_length: int,
               nsp: bool, control: TaskControl | None = None) -> tuple[list[dict[str, Any]], list[int]]:
        args = (list(rows.texts), list(rows.pairs)) if rows.pairs is not None else (list(rows.texts),)
        encoded = tokenizer(*args, truncation=True, max_length=max_length)
        lengths = [len(ids) for ids in tokenizer(*args)["input_ids"]]
        values = [float(label) for label in rows.labels]
        examples = [{**{key: encoded[key][i] for key in encoded}, "labels": value} for i, value in enumerate(values)]
        return examples, lengths

    def collator(self, tokenizer: Any) -> Any:
        from transformers import DataCollatorWithPadding

        return DataCollatorWithPadding(tokenizer)

    def evaluation(self, data: Data, eval_rows: list[dict[str, Any]], nsp: bool) -> tuple[metrics_mod.Metrics, Any]:
        return regression_metrics, one_value
