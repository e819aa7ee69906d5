"""One model on a whole labelled file: metrics, per-class scores, confusion, slices, every row.

`evaluate(loaded, dataset)` is the core; `evaluate_job` loads model A (and B to compare) once
each through the model cache, reads the file once, and returns an `Outcome`-like comparison.
Results are frozen dataclasses with `to_json()` in the CLI contract's shape, and `notes`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bertstudio.core import notes as _notes
from bertstudio.core.evaluate import metrics as scores
from bertstudio.core.evaluate.predict import EvalOptions, Prediction
from bertstudio.core.evaluate.readers import Dataset, EvalColumns, Example, read_dataset
from bertstudio.core.limits import MAX_BATCH_SIZE, check_count
from bertstudio.core.models import LoadedModel, LoadRequest, load_model
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.spec import EvaluateAdapter, adapter_for

LENGTH_EDGES = (10, 20, 40, 80, 160)  # words: buckets 1-10, 11-20, 21-40, 41-80, 81-160, 161+
MAX_SLICE_VALUES = 50  # a column with more distinct values is an id, not a slice


@dataclass(frozen=True)
class RowResult:
    row: int  # 0-based data row
    line: int  # where it is in the file
    text: str
    gold: str
    prediction: str
    score: float
    correct: bool
    length: int = 0  # words

    def to_json(self) -> dict[str, Any]:
        return {"row": self.row, "gold": self.gold, "prediction": self.prediction, "score": self.score,
                "line": self.line}


@dataclass(frozen=True)
class Slice:
    by: str  # "label", "length" or "column:<name>"
    value: str
    n: int
    metrics: dict[str, float] = field(hash=False)

    def to_json(self) -> dict[str, Any]:
        return {"by": self.by, "value": self.value, "n": self.n, "metrics": self.metrics}


@dataclass(frozen=True)
class Evaluation:
    task: str  # spec key
    model: str
    data: str
    metrics: dict[str, float] = field(hash=False)
    rows: tuple[RowResult, ...]
    per_label: dict[str, scores.ClassScores] = field(default_factory=dict, hash=False)  # per class / per entity type
    confusion: scores.Confusion | None = None
    slices: tuple[Slice, ...] = ()
    notes: tuple[Note, ...] = ()
    seconds: float = 0.0
    golds: tuple[Any, ...] = field(default=(), repr=False, compare=False)  # task-shaped, for subsets
    predictions: tuple[Any, ...] = field(default=(), repr=False, compare=False)
    dataset: Dataset | None = field(default=None, repr=False, compare=False)  # the rows read (projector, open)
    size_mb: float = 0.0  # the model's state in memory (int8 weights one byte each)
    quantize: str | None = None  # "int8" when the model was the quantized variant
    # Single-label tasks: (rows, classes) float32 probabilities, columns in `classes` order (curves, thresholds)
    probabilities: Any = field(default=None, repr=False, compare=False)
    classes: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def errors(self) -> tuple[RowResult, ...]:
        """The wrong rows, in row order or in the order the task gives (similarity: worst first)."""
        wrong = tuple(r for r in self.rows if not r.correct)
        order = self.adapter.error_order if self.predictions else None
        return tuple(sorted(wrong, key=lambda r: order(self.predictions[r.row]))) if order else wrong

    @property
    def adapter(self) -> EvaluateAdapter:
        """The task's EvaluateAdapter (what the result pages and the CLI read about the task)."""
        return adapter_for(self.task, EvaluateAdapter)

    @property
    def per_label_name(self) -> str:
        return f"per_{self.adapter.per_label}"

    def rows_of(self, gold: str, prediction: str) -> tuple[RowResult, ...]:
        """The rows behind one confusion-matrix cell."""
        return tuple(r for r in self.rows if r.gold == gold and r.prediction == prediction)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"n": self.n, "task": self.task, "model": self.model, "data": self.data,
                                "metrics": self.metrics}
        if self.per_label:
            data[self.per_label_name] = {k: v.to_json() for k, v in self.per_label.items()}
        if self.confusion is not None:
            data["confusion"] = self.confusion.to_json()
        data["errors"] = [r.to_json() for r in self.errors]
        data["slices"] = [s.to_json() for s in self.slices]
        data["seconds"] = self.seconds
        data["rows_per_second"] = self.n / self.seconds if self.seconds > 0 else None
        data["ms_per_row"] = 1000 * self.seconds / self.n if self.n else None
        data["size_mb"] = self.size_mb
        data["quantize"] = self.quantize
        data["notes"] = [n.to_json() for n in self.notes]
        return data


def _equal(gold: Any, prediction: Any) -> bool:
    return bool(gold == prediction)


def _gold_text(example: Example, prediction: Prediction) -> str:
    return str(example.gold)


def length_bucket(words: int) -> str:
    low = 1
    for edge in LENGTH_EDGES:
        if words <= edge:
            return f"{low}-{edge} words"
        low = edge + 1
    return f"{low}+ words"


def _label_of(adapter: EvaluateAdapter, example: Example) -> str | None:
    if adapter.labelled:
        return str(example.gold)
    return adapter.label_of(example) if adapter.label_of is not None else None


def slices(adapter: EvaluateAdapter, dataset: Dataset, rows: Sequence[RowResult], golds: Sequence[Any],
           predictions: Sequence[Any], labels: Sequence[str] = ()) -> tuple[Slice, ...]:
    """Metrics by gold label, by text-length bucket and by every column with few distinct values."""
    groups: dict[tuple[str, str], list[int]] = {}
    length_order = {length_bucket(edge): i for i, edge in enumerate((*LENGTH_EDGES, LENGTH_EDGES[-1] + 1))}
    for i, (example, row) in enumerate(zip(dataset.examples, rows, strict=True)):
        label = _label_of(adapter, example)
        if label is not None:
            groups.setdefault(("label", label), []).append(i)
        groups.setdefault(("length", length_bucket(row.length)), []).append(i)
        for column in dataset.columns:
            groups.setdefault((f"column:{column}", example.fields.get(column, "")), []).append(i)
    too_many = {by for by in {b for b, _ in groups} if sum(1 for b, _ in groups if b == by) > MAX_SLICE_VALUES}
    found = []
    for (by, value), members in groups.items():
        if by in too_many:
            continue
        share = sum(rows[i].correct for i in members) / len(members)
        if adapter.labelled:
            # One label's rows make macro scores meaningless; accuracy is the slice's number (and
            # computing it here spares a scikit-learn call per slice: the bench's overhead).
            values = {"row_accuracy": share, "accuracy": share}
        else:
            values, _, _ = adapter.metrics([golds[i] for i in members], [predictions[i] for i in members], labels)
            if adapter.row_accuracy:
                values = {"row_accuracy": share, **values}
        found.append(Slice(by, value, len(members), values))
    return tuple(sorted(found, key=lambda s: (s.by != "label", s.by, length_order.get(s.value, 0), s.value)))


def _as_note(item: Note | str) -> Note:
    """Task code gives Note objects (or, not yet on the frame, plain strings)."""
    if isinstance(item, Note):
        return item
    return _notes.warning(item) if "cut" in item or "longer" in item else _notes.info(item)


def evaluate(loaded: LoadedModel, dataset: Dataset, control: TaskControl | None = None,
             options: EvalOptions | None = None) -> Evaluation:
    """Predict every row of `dataset` with `loaded` and score the predictions against the gold."""
    control = control or TaskControl()
    options = options or EvalOptions()
    if options.batch_size is not None:
        check_count(options.batch_size, "The batch size", 1, MAX_BATCH_SIZE)
    task, started = dataset.task, time.perf_counter()
    adapter = adapter_for(task, EvaluateAdapter)
    found: list[Note] = [_notes.info(text) for text in dataset.notes]
    labels, keywords = list(adapter.labels), dict[str, Any]()
    if adapter.prepare is not None:  # a label or tag the model does not know: refused before any row runs
        labels, ready, keywords = adapter.prepare(loaded, dataset)
        dataset = keywords.pop("dataset", dataset)  # the gold read anew for this model (multi-label: label sets)
        found += [_notes.info(text) for text in ready]
    predicted, extra = adapter.predict(loaded, dataset.examples, control, options, **keywords)
    found += [_as_note(item) for item in extra]
    golds = tuple(x.gold for x in dataset.examples)
    values = tuple(p.value for p in predicted)
    control.report("Computing metrics…", None)
    metrics, per_label, confusion = adapter.metrics(golds, values, labels)
    correct, shown_gold = adapter.correct or _equal, adapter.shown_gold or _gold_text
    rows = tuple(
        RowResult(i, x.line, x.text, shown_gold(x, p), p.shown, p.score, correct(x.gold, p.value),
                  len(x.text.split()))
        for i, (x, p) in enumerate(zip(dataset.examples, predicted, strict=True)))
    return Evaluation(
        task=task, model=loaded.info.request.source, data=dataset.path, metrics=metrics, rows=rows,
        per_label=per_label, confusion=confusion, slices=slices(adapter, dataset, rows, golds, values, labels),
        notes=_notes.unique(found), seconds=time.perf_counter() - started, golds=golds, predictions=values,
        dataset=dataset, **_probabilities(predicted))


def _probabilities(predicted: Sequence[Prediction]) -> dict[str, Any]:
    """The rows' class probabilities as one array, where the task's predictor gives them."""
    if not predicted or predicted[0].probabilities is None:
        return {}
    import numpy as np

    return {"probabilities": np.asarray([p.probabilities for p in predicted], dtype=np.float32),
            "classes": predicted[0].classes}


@dataclass(frozen=True)
class Disagreement:
    row: int
    gold: str
    a: str
    b: str
    a_correct: bool
    b_correct: bool

    def to_json(self) -> dict[str, Any]:
        return {"row": self.row, "gold": self.gold, "prediction_a": self.a, "prediction_b": self.b,
                "a_correct": self.a_correct, "b_correct": self.b_correct}


@dataclass(frozen=True)
class EvalComparison:
    """Two models on the same rows: both evaluations, where they disagree, and McNemar's test."""

    a: Evaluation
    b: Evaluation
    disagreements: tuple[Disagreement, ...]
    mcnemar: scores.McNemar

    @property
    def notes(self) -> tuple[Note, ...]:
        return _notes.unique(self.a.notes + tuple(n.prefixed("B: ") for n in self.b.notes))

    @property
    def agreement(self) -> float:
        """The share of rows where A and B predict the same (top-1 agreement)."""
        return 1.0 - len(self.disagreements) / self.a.n if self.a.n else 1.0

    def to_json(self) -> dict[str, Any]:
        data = self.a.to_json()
        data["compare"] = {**self.b.to_json(), "disagreements": [d.to_json() for d in self.disagreements],
                           "agreement": self.agreement,
                           "mcnemar_p": self.mcnemar.p_exact, "mcnemar_chi2_p": self.mcnemar.p_chi2,
                           "a_only_correct": self.mcnemar.a_only, "b_only_correct": self.mcnemar.b_only}
        return data


def compare(a: Evaluation, b: Evaluation) -> EvalComparison:
    if a.n != b.n or a.task != b.task:
        raise ValueError("the two evaluations are not of the same rows")
    disagreements = tuple(Disagreement(x.row, x.gold, x.prediction, y.prediction, x.correct, y.correct)
                          for x, y in zip(a.rows, b.rows, strict=True) if x.prediction != y.prediction)
    return EvalComparison(a, b, disagreements, scores.mcnemar([r.correct for r in a.rows], [r.correct for r in b.rows]))


@dataclass(frozen=True)
class EvalRequest:
    """What the tab and the CLI ask for: a file, its columns, and how to run."""

    data: str
    columns: EvalColumns = EvalColumns()
    limit: int | None = None
    options: EvalOptions = EvalOptions()


def evaluate_job(request: LoadRequest, evaluation: EvalRequest, control: TaskControl,
                 compare_source: str | None = None) -> Evaluation | EvalComparison:
    """Read the file (errors before any model loads), evaluate model A, then B on the same rows."""
    from bertstudio.core.quantize import compare_request

    control.report(f"Reading {Path(evaluation.data).name}…", None)
    dataset = read_dataset(request.task, evaluation.data, evaluation.columns, control).limited(evaluation.limit)
    loaded = load_model(request, control)
    result = _with_load_notes(evaluate(loaded, dataset, control, evaluation.options), loaded)
    if not compare_source:
        return result
    from bertstudio.core.errors import model_b_errors

    with model_b_errors(compare_source):  # what fails on B is said as B's, never as "the model"'s
        other = load_model(compare_request(request, compare_source), control)  # "SRC [int8]": the int8 variant
        second = _with_load_notes(evaluate(other, dataset, control, evaluation.options), other)
    return compare(result, second)


def _with_load_notes(result: Evaluation, loaded: LoadedModel) -> Evaluation:
    from dataclasses import replace

    from bertstudio.core.jobs import model_notes
    from bertstudio.core.quantize import variant_source

    request = loaded.info.request
    return replace(result, notes=_notes.unique(model_notes(loaded) + result.notes), size_mb=loaded.info.size_mb,
                   quantize=request.quantize, model=variant_source(request.source, request.quantize))
