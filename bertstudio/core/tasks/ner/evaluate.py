"""Evaluate for NER: a CoNLL file (IOB2 tags checked), the model's entity types against the file's,
word-level tags from the pipeline's word aggregation, and seqeval's entity-level metrics."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.evaluate.metrics import ClassScores, Scores
from bertstudio.core.evaluate.predict import Checked, EvalOptions, Prediction
from bertstudio.core.evaluate.readers import Dataset, EvalColumns, Example
from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.ner import NerInput, has_word_boundaries
from bertstudio.core.tasks.ner.entities import entity_type


def read_file(path: Path, _columns: EvalColumns | None = None, control: TaskControl | None = None) -> Dataset:
    """inputs = words, gold = IOB2 tags (CoNLL: 'word ... tag' per line, blank line between sentences)."""
    from bertstudio.core.tasks.ner.conll import read_conll
    from bertstudio.core.training.data import RowIssue, raise_issues

    sentences = read_conll(path, control)
    issues = []
    for sentence in sentences:
        for offset, (previous, tag) in enumerate(zip(("O",) + sentence.tags, sentence.tags, strict=False)):
            if tag.startswith("I-") and previous[2:] != tag[2:]:
                issues.append(RowIssue(sentence.line + offset, f"tag '{tag}' follows '{previous}': IOB2 starts an "
                                       "entity with B-"))
    raise_issues(path, issues)
    examples = [Example(s.line, " ".join(s.tokens), s.tokens, s.tags) for s in sentences]
    return Dataset("", str(path), tuple(examples))



def model_types(loaded: LoadedModel) -> set[str]:
    return {entity_type(label) for label in loaded.info.id2label.values() if label != "O"}



def prepare(loaded: LoadedModel, dataset: Dataset) -> Checked:
    """A gold entity type the model has no label for is scored as missed (seqeval gives it recall 0)
    and named in a note: a file with one more type than the head (ORG for a LOC/PER model) is still
    worth scoring. Only a model that knows none of the file's types is refused, naming a line."""
    return [], unknown_types_notes(loaded, dataset), {}


def unknown_types_notes(loaded: LoadedModel, dataset: Dataset) -> list[str]:
    """The note naming the file's entity types the model cannot predict ([] if it knows them all)."""
    known = model_types(loaded)
    first: dict[str, int] = {}  # unknown type -> the line it is first seen on
    gold_types: set[str] = set()
    for example in dataset.examples:
        for offset, tag in enumerate(example.gold):
            if tag != "O":
                gold_types.add(tag[2:])
                if tag[2:] not in known:
                    first.setdefault(tag[2:], example.line + offset)
    if not first:
        return []
    if not gold_types & known:  # nothing to score: every entity would be missed
        kind, line = min(first.items(), key=lambda item: item[1])
        tag = next(t for x in dataset.examples for t in x.gold if t[2:] == kind)
        raise InputError(f"Line {line} has the tag '{tag}': the model knows no entity type '{kind}'.",
                         hint=f"The model's types: {', '.join(sorted(known)) or 'none'}; the file's: "
                              f"{', '.join(sorted(gold_types))}. Evaluate a model trained for these types.")
    return [f"The model does not know {', '.join(sorted(first))}: those entities count as missed."]



def words_to_tags(words: Sequence[str], entities: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """IOB2 tags of the words of " ".join(words) from the pipeline's character-offset entities."""
    starts, position = [], 0
    for word in words:
        starts.append(position)
        position += len(word) + 1
    tags = ["O"] * len(words)
    for entity in entities:
        kind = str(entity.get("entity_group", entity.get("entity", "")))
        kind = kind[2:] if len(kind) > 2 and kind[1] == "-" else kind
        inside = [i for i, s in enumerate(starts) if s < entity["end"] and s + len(words[i]) > entity["start"]]
        for n, i in enumerate(inside):
            if tags[i] == "O":
                tags[i] = f"{'B' if n == 0 else 'I'}-{kind}"
    return tuple(tags)



def predict(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl,
            options: EvalOptions) -> tuple[list[Prediction], list[Any]]:
    """Word-level IOB2 tags from the pipeline's word aggregation ('first': a word takes its first
    wordpiece's label, the convention of transformers' run_ner evaluation). The forward passes are the
    batch engine's (sorted, a token budget); each row's logits then go through the token-classification
    pipeline's own postprocess (its softmax, pre-entities and aggregation), so the entities are its."""
    import warnings

    import torch
    from transformers.pipelines.token_classification import AggregationStrategy

    from bertstudio.core import engine

    strategy = "first" if loaded.tokenizer.is_fast else "simple"
    notes = [] if has_word_boundaries(loaded.tokenizer) or strategy == "simple" else [
        "This tokenizer does not mark where words continue; word boundaries were taken from spaces."]
    texts = [" ".join(x.inputs) for x in examples]
    fast = loaded.tokenizer.is_fast
    model = loaded.model

    def own_length(batch: engine.Batch, logits: Any) -> list[Any]:
        return [logits[k, :length] for k, length in enumerate(batch.lengths.tolist())]

    encoded, logits = engine.encode_run(loaded, texts, None, lambda batch: model(**batch.inputs).logits, control,
                                        encode={"offsets": fast, "special_tokens": True}, max_rows=options.batch_size,
                                        verb="Tagged", rows_of=own_length)  # tokenized while the batches run
    pipe = loaded.pipeline("token-classification")
    out: list[Prediction] = []
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Tokenizer does not support real words")
        for n, (example, text) in enumerate(zip(examples, texts, strict=True)):
            offsets = encoded.extras["offset_mapping"][n] if fast else None
            row = {"logits": torch.from_numpy(logits[n])[None], "input_ids": torch.tensor([encoded.input_ids[n]]),
                   "special_tokens_mask": torch.tensor([encoded.extras["special_tokens_mask"][n]]),
                   "offset_mapping": torch.tensor([offsets]) if offsets is not None else None, "sentence": text}
            entities = pipe.postprocess([row], aggregation_strategy=AggregationStrategy[strategy.upper()])
            tags = words_to_tags(example.inputs, entities)
            score = sum(float(e["score"]) for e in entities) / len(entities) if entities else 1.0
            out.append(Prediction(tags, entities_text(example.inputs, tags), score))
    return out, notes + engine.cut_note(loaded, encoded, [x.line for x in examples])


def entities_text(words: Sequence[str], tags: Sequence[str]) -> str:
    """'Klaus/PER Vienna/LOC' from IOB2 tags (what the error browser shows)."""
    spans: list[list[str]] = []
    for word, tag in zip(words, tags, strict=True):
        if tag.startswith("B-") or (tag.startswith("I-") and (not spans or spans[-1][1] != tag[2:])):
            spans.append([word, tag[2:]])
        elif tag.startswith("I-"):
            spans[-1][0] += f" {word}"
    return "; ".join(f"{text}/{kind}" for text, kind in spans) or "(none)"



def scores(golds: Sequence[Sequence[str]], predictions: Sequence[Sequence[str]]
        ) -> tuple[dict[str, float], dict[str, ClassScores]]:
    """Entity-level micro precision/recall/F1 and per type (seqeval, strict IOB2)."""
    from seqeval.metrics import classification_report
    from seqeval.scheme import IOB2

    gold_lists, pred_lists = [list(g) for g in golds], [list(p) for p in predictions]
    report = classification_report(gold_lists, pred_lists, mode="strict", scheme=IOB2, output_dict=True,
                                   zero_division=0)
    micro = report.pop("micro avg")
    for name in ("macro avg", "weighted avg"):
        report.pop(name, None)
    accuracy = sum(g == p for g, p in zip(gold_lists, pred_lists, strict=True)) / max(1, len(gold_lists))
    metrics = {"precision": float(micro["precision"]), "recall": float(micro["recall"]), "f1": float(micro["f1-score"]),
               "sentence_accuracy": accuracy}
    per_type = {name: ClassScores(float(v["precision"]), float(v["recall"]), float(v["f1-score"]), int(v["support"]))
                for name, v in sorted(report.items())}
    return metrics, per_type



def metrics(golds: Sequence[Any], predictions: Sequence[Any], labels: Sequence[str] = ()) -> Scores:
    values, per_type = scores(golds, predictions)
    return values, per_type, None


def inputs_of(example: Example) -> NerInput:
    return NerInput(" ".join(example.inputs))


def pair_of(example: Example) -> tuple[str, str | None]:
    return " ".join(example.inputs), None


def shown_gold(example: Example, prediction: Any) -> str:
    return entities_text(example.inputs, example.gold)
