"""Fine-tuning a token classifier (NER) on CoNLL files: the NER spec's trainable, labelling each word's
first sub-token, and entity-level validation scores (BIO spans, as seqeval counts them).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bertstudio.core.errors import ModelSourceError
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.ner.conll import label_list, read_conll
from bertstudio.core.training import data as data_mod
from bertstudio.core.training import metrics
from bertstudio.core.training.base import Config, Data, TrainableTask, train_and_validation


def bio_spans(tags: Sequence[str]) -> set[tuple[int, int, str | None]]:
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


def tagging_metrics(labels: Sequence[str]) -> metrics.Metrics:
    """Token accuracy and entity-level precision, recall and F1 (first sub-token of each word)."""
    import numpy as np

    def compute(pred: Any) -> dict[str, float]:
        predicted, gold = np.asarray(pred.predictions), np.asarray(pred.label_ids)
        tp = fp = fn = 0
        for p_row, g_row in zip(predicted, gold, strict=True):
            keep = g_row != -100
            p_spans = bio_spans([labels[i] for i in p_row[keep]])
            g_spans = bio_spans([labels[i] for i in g_row[keep]])
            tp, fp, fn = tp + len(p_spans & g_spans), fp + len(p_spans - g_spans), fn + len(g_spans - p_spans)
        mask = gold != -100
        return {
            "accuracy": float((predicted[mask] == gold[mask]).mean()),
            "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0,
            "precision": tp / (tp + fp) if tp + fp else 0.0,
            "recall": tp / (tp + fn) if tp + fn else 0.0,
        }

    return compute


class TokenClassification(TrainableTask):
    key = "token-classification"
    order = 20
    command = "ner"  # the NER spec's CLI name (test_task_packages checks it)
    title = "Token classification / NER (CoNLL)"
    demo_files = ("ner_train.conll", "ner_eval.conll")
    auto_class = "AutoModelForTokenClassification"

    def read(self, config: Config, nsp: bool = True) -> Data:
        sentences, evaluation = train_and_validation(config, read_conll)
        labels = label_list([s.tags for s in sentences])
        data_mod.check_label_count(config.train_file, labels)
        if evaluation is not None:
            unknown = [data_mod.RowIssue(s.line, f"tag '{t}' never occurs in the training data")
                       for s in evaluation for t in s.tags if t not in labels]
            data_mod.raise_issues(Path(config.eval_file or config.train_file), unknown)
        return Data(sentences, evaluation, labels)

    def load(self, folder: Path, config: Config, labels: list[str], tokenizer: Any) -> tuple[Any, bool]:
        if not getattr(tokenizer, "is_fast", False):
            raise ModelSourceError("Token classification needs a fast tokenizer (tokenizer.json) for word alignment.")
        return super().load(folder, config, labels, tokenizer)

    def encode(self, tokenizer: Any, rows: Any, labels: list[str], max_length: int,
               nsp: bool, control: TaskControl | None = None) -> tuple[list[dict[str, Any]], list[int]]:
        """Label the first sub-token of each word; the rest get -100 (ignored by the loss)."""
        index = {label: i for i, label in enumerate(labels)}
        words = [list(s.tokens) for s in rows]
        encoded = tokenizer(words, is_split_into_words=True, truncation=True, max_length=max_length)
        lengths = [len(ids) for ids in tokenizer(words, is_split_into_words=True)["input_ids"]]
        examples = []
        for i, sentence in enumerate(rows):
            previous, tags = None, []
            for word in encoded.word_ids(i):
                tags.append(-100 if word is None or word == previous else index[sentence.tags[word]])
                previous = word
            examples.append({**{key: encoded[key][i] for key in encoded}, "labels": tags})
        return examples, lengths

    def collator(self, tokenizer: Any) -> Any:
        from transformers import DataCollatorForTokenClassification

        return DataCollatorForTokenClassification(tokenizer)

    def metrics(self, labels: list[str], nsp: bool) -> metrics.Metrics:
        return tagging_metrics(labels)
