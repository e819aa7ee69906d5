"""Evaluate for Classification: its labelled-table reader, the model's labels against the file's,
the batch predictor (top label, score and every class's probability), metrics and row functions.
A regression head's steps are in regression.py (the spec names those, which hand other models here)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bertstudio.core.datafiles import read_table, tick
from bertstudio.core.errors import InputError
from bertstudio.core.evaluate.predict import Checked, EvalOptions, Prediction
from bertstudio.core.evaluate.readers import Dataset, EvalColumns, Example, extra_fields, finish_dataset
from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.classification import ClassificationInput, evaluate_multilabel, steps


def read_file(path: Path, columns: EvalColumns, control: TaskControl | None = None) -> Dataset:
    """inputs = (text, pair or None), gold = label text. The training reader checks every row."""
    from bertstudio.core.training.data import Columns, detect_columns, labelled_rows

    chosen = None
    header, table = read_table(path, control=control)
    if columns.text or columns.label or columns.pair:
        guess = detect_columns(header)
        chosen = Columns(text=columns.text or guess.text, label=columns.label or guess.label,
                         text_pair=columns.pair or (guess.text_pair if not columns.text else None))
    data = labelled_rows(path, header, table, chosen, control, empty_labels=True)  # a multi-label row may have none
    by_line = {line: row for line, row, _ in table if row is not None}
    used = (data.columns.text, data.columns.label, data.columns.text_pair)
    examples = []
    for i, (text, label, line) in enumerate(zip(data.texts, data.labels, data.lines, strict=True)):
        tick(control, i)
        pair = data.pairs[i] if data.pairs is not None else None
        shown = f"{text} ||| {pair}" if pair else text
        examples.append(Example(line, shown, (text, pair), label, extra_fields(by_line.get(line, {}), used)))
    return finish_dataset(path, examples, [], used, header)


def model_labels(loaded: LoadedModel) -> list[str]:
    return [loaded.info.id2label[i] for i in sorted(loaded.info.id2label)]


def prepare(loaded: LoadedModel, dataset: Dataset) -> Checked:
    """The model's labels as the file names them (generic LABEL_n matched to numbers), before any row runs;
    a multi-label head reads each gold cell as a label set (evaluate_multilabel.py)."""
    if evaluate_multilabel.is_multi_label(loaded):
        return evaluate_multilabel.prepare(loaded, dataset)
    rename, note = label_problem(loaded, dataset)
    return [rename.get(label, label) for label in model_labels(loaded)], [note] if note else [], {"rename": rename}


def label_problem(loaded: LoadedModel, dataset: Dataset) -> tuple[dict[str, str], str]:
    """Model label -> file label map, and a note when generic LABEL_n names were matched to numbers.
    A gold label the model does not know is an error naming it and its line."""
    known = model_labels(loaded)
    empty = next((x for x in dataset.examples if not str(x.gold)), None)
    if empty is not None:
        raise InputError(f"Line {empty.line} has an empty label.",
                         hint="Give every row its label (only a multi-label model reads an empty cell as none).")
    golds = {str(x.gold) for x in dataset.examples}
    if golds <= set(known):
        return {}, ""
    generic = {f"LABEL_{i}": str(i) for i in loaded.info.id2label if loaded.info.id2label[i] == f"LABEL_{i}"}
    if generic and golds <= set(generic.values()):
        return generic, "The model's labels are generic (LABEL_0…); they were matched to the file's numbers 0…"
    first = next(x for x in dataset.examples if str(x.gold) not in known)
    raise InputError(
        f"Line {first.line} has the label '{first.gold}', which the model does not know.",
        hint=f"The model's labels: {', '.join(known) or 'none'}. Relabel the file or choose the matching model.")


def predict(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl,
            options: EvalOptions, rename: dict[str, str] | None = None,
            multi_label: bool = False) -> tuple[list[Prediction], list[Any]]:
    """Every row through the batch engine (core/engine.py: tokenized while the batches run, near-sorted
    by length, a token budget, at most `options.batch_size` rows per forward), read as the
    text-classification pipeline reads a row: its top label and score, and every class's probability
    for curves and thresholds."""
    from bertstudio.core import engine

    if multi_label:
        return evaluate_multilabel.predict(loaded, examples, control, options)
    rename = rename or {}
    encoded, logits = steps.logits(loaded, [x.inputs for x in examples], control, max_rows=options.batch_size,
                                   verb="Classified")
    return predictions(loaded, logits, rename), engine.cut_note(loaded, encoded, [x.line for x in examples])


def predictions(loaded: LoadedModel, logits: Any, rename: dict[str, str]) -> list[Prediction]:
    """Each row's top label and its score (the pipeline's), with every class's probability: whole arrays at
    once, so only the Prediction objects are made per row (on a GPU this is most of what follows the forward)."""
    import numpy as np

    if not len(logits):
        return []
    scores = np.asarray(steps.read(loaded, logits))
    best = scores.argmax(axis=1)
    top = scores[np.arange(len(best)), best].tolist()
    names = loaded.info.id2label
    shown = [rename.get(str(names[i]), str(names[i])) for i in range(scores.shape[1])]
    probabilities = class_probabilities(loaded.model.config, logits)
    if probabilities is None:
        return [Prediction(shown[b], shown[b], score) for b, score in zip(best.tolist(), top, strict=True)]
    classes = tuple(rename.get(label, label) for label in model_labels(loaded))
    return [Prediction(shown[b], shown[b], score, row, classes)
            for b, score, row in zip(best.tolist(), top, probabilities, strict=True)]


def class_probabilities(config: Any, logits: Any) -> Any:
    """(rows, classes) probabilities as TextClassificationPipeline.postprocess makes them (sigmoid for a
    multi-label head, softmax otherwise); None for a regression or one-logit head (no classes to rank)."""
    import numpy as np

    values = np.asarray(logits, dtype=np.float64)
    if config.problem_type == "regression" or values.ndim != 2 or values.shape[1] < 2:
        return None
    if config.problem_type == "multi_label_classification":
        return (1.0 / (1.0 + np.exp(-values))).astype(np.float32)
    shifted = np.exp(values - values.max(axis=1, keepdims=True))
    return (shifted / shifted.sum(axis=1, keepdims=True)).astype(np.float32)


def inputs_of(example: Example) -> ClassificationInput:
    """A row opened in the Classification tab: its text and pair."""
    text, pair = example.inputs
    return ClassificationInput(text, pair or None)
