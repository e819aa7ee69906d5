"""Linear concept erasure (LEACE, Belrose et al. 2023, EleutherAI's concept-erasure package) at one layer.

The concept file is a table with `text` and `concept` columns. Every token the model reads of a text
([CLS] and [SEP] included) is labelled with its text's concept; its hidden_states[L] are collected
through the batch engine. Whole texts are split into a training and a held-out share (seeded,
stratified by concept). LEACE is fitted on the training tokens' states (`LeaceEraser.fit(x, z)`, z
one-hot, in float64); a logistic-regression probe (standardised states) is trained on the training
tokens and scored on the held-out ones, before and after erasure. LEACE guarantees that no linear
classifier does better than a constant one, so after erasure the probe falls to the majority
class: the held-out share of the training set's most frequent concept.

With a labelled data file, the task's metrics are computed twice on it: intact, and with every
token's state at layer L replaced by its erased state in the forward pass (edit.editing), so the
layers above read a state without the concept: what the model loses.

`positions="first"` fits and erases the first token only ([CLS], <s>): where a sequence classifier
reads its answer. Erasing from every token's pooled distribution leaves a concept decodable at one
position (on the MiniLM sentiment head, a probe on [CLS] alone still reads it after an all-token
erasure at the last layer), so both are offered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bertstudio.core.errors import InputError
from bertstudio.core.features import states as _states
from bertstudio.core.notes import Note

if TYPE_CHECKING:
    from bertstudio.core.models import LoadedModel, LoadRequest
    from bertstudio.core.progress import TaskControl

MAX_CONCEPT_ROWS = 100_000
MAX_CLASSES = 100
MAX_PROBE_TOKENS = 20_000  # training tokens the probe is fitted on (a seeded sample above)
HELD_OUT = 0.25
SEED = 0
MAX_CONCEPT_CHARS = 200
POSITIONS = ("all", "first")  # every token, or the first token only


@dataclass(frozen=True)
class Concepts:
    texts: tuple[str, ...]
    labels: np.ndarray  # (texts,) int64: index into `classes`
    classes: tuple[str, ...]


def read_concepts(path: str | Path, control: TaskControl | None = None) -> Concepts:
    """`text,concept` rows of a CSV/TSV/JSONL file; one line naming what is wrong otherwise."""
    from bertstudio.core.datafiles import read_table

    where = Path(path)
    header, rows = read_table(where, "concept file", MAX_CONCEPT_ROWS, control)
    missing = [name for name in ("text", "concept") if name not in header]
    if missing:
        raise InputError(f"The concept file '{where.name}' has no {' or '.join(repr(m) for m in missing)} column.",
                         hint=f"It needs the columns text,concept; its columns: {', '.join(header)[:200]}.")
    texts, concepts = [], []
    for line, row, problem in rows:
        if row is None:
            raise InputError(f"Line {line} of '{where.name}': {problem}.")
        text, concept = str(row.get("text") or "").strip(), str(row.get("concept") or "").strip()
        if not text or not concept:
            raise InputError(f"Line {line} of '{where.name}' has an empty {'text' if not text else 'concept'}.")
        if len(concept) > MAX_CONCEPT_CHARS:
            raise InputError(f"Line {line} of '{where.name}' has a concept of {len(concept)} characters; at most "
                             f"{MAX_CONCEPT_CHARS}.")
        texts.append(text)
        concepts.append(concept)
    classes = tuple(sorted(set(concepts)))
    if len(classes) < 2:
        named = f" ('{classes[0]}')" if classes else ""
        raise InputError(f"The concept file '{where.name}' has one concept class{named}; erasing a concept needs "
                         "texts of at least two classes.", hint="Add texts labelled with another concept.")
    if len(classes) > MAX_CLASSES:
        raise InputError(f"The concept file '{where.name}' has {len(classes)} concept classes; at most "
                         f"{MAX_CLASSES}.")
    index = {name: i for i, name in enumerate(classes)}
    return Concepts(tuple(texts), np.asarray([index[c] for c in concepts], np.int64), classes)


def one_hot(labels: np.ndarray, classes: int) -> np.ndarray:
    return np.eye(classes, dtype=np.float64)[labels]


def fit_eraser(x: np.ndarray, labels: np.ndarray, classes: int) -> Any:
    """concept_erasure.LeaceEraser fitted on states (N, d) with one-hot concepts, in float64."""
    import torch
    from concept_erasure import LeaceEraser

    return LeaceEraser.fit(torch.as_tensor(np.asarray(x, np.float64)), torch.as_tensor(one_hot(labels, classes)))


def erase_states(eraser: Any, x: np.ndarray) -> np.ndarray:
    """The eraser applied to states (N, d), float32 out."""
    import torch

    with torch.no_grad():  # the eraser's own tensors, no model
        return eraser(torch.as_tensor(np.asarray(x, np.float64))).float().numpy()


def probe_accuracy(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray,
                   seed: int) -> float:
    """Held-out accuracy of a logistic-regression probe (standardised features) trained on (train_x, train_y)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if len(np.unique(train_y)) < 2:
        return float(np.mean(test_y == train_y[0])) if len(test_y) else float("nan")
    probe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, random_state=seed))
    probe.fit(train_x, train_y)
    return float(probe.score(test_x, test_y))


def _torch_eraser(eraser: Any, device: Any, dtype: Any) -> Any:
    from concept_erasure import LeaceEraser

    bias = eraser.bias.to(device=device, dtype=dtype) if eraser.bias is not None else None
    return LeaceEraser(eraser.proj_left.to(device=device, dtype=dtype),
                       eraser.proj_right.to(device=device, dtype=dtype), bias)


def check_positions(positions: str) -> str:
    if positions not in POSITIONS:
        raise InputError(f"Positions must be one of {', '.join(POSITIONS)}, not {str(positions)[:20]!r}.")
    return positions


def erasing(loaded: LoadedModel, layer: int, eraser: Any, positions: str = "all") -> Any:
    """A context manager: every forward in it reads hidden_states[layer] with the concept erased (at every
    token, or at the first token only)."""
    from bertstudio.core.features.edit import editing

    parameter = next(loaded.model.parameters())
    moved = _torch_eraser(eraser, parameter.device, parameter.dtype)
    if check_positions(positions) == "all":
        return editing(loaded.model, layer, lambda x: moved(x))

    def first_only(x: Any) -> Any:
        out = x.clone()
        out[:, 0] = moved(x[:, 0])
        return out

    return editing(loaded.model, layer, first_only)


@dataclass(frozen=True)
class Erasure:
    """What erasing the concept at `layer` did: the probe before and after, and the task's metrics."""

    layer: int
    positions: str
    classes: tuple[str, ...]
    texts: int
    tokens: int
    held_out_tokens: int
    probe_accuracy_before: float
    probe_accuracy_after: float
    majority: float
    eraser: Any = field(default=None, repr=False, compare=False)  # the fitted LeaceEraser (float64)
    comparison: Any = None  # evaluate.EvalComparison: the data file intact (a) and erased (b)
    notes: tuple[Note, ...] = ()

    @property
    def main_metric(self) -> str:
        if self.comparison is None:
            return ""
        metrics = self.comparison.a.metrics
        return next((k for k in ("accuracy", "f1", "exact_match", "top1_accuracy", "spearman") if k in metrics),
                    next(iter(metrics), ""))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "layer": self.layer, "positions": self.positions, "concept_classes": list(self.classes),
            "texts": self.texts, "tokens": self.tokens,
            "held_out_tokens": self.held_out_tokens, "probe_accuracy_before": round(self.probe_accuracy_before, 6),
            "probe_accuracy_after": round(self.probe_accuracy_after, 6), "majority": round(self.majority, 6)}
        if self.comparison is not None:
            out |= {"task": self.comparison.a.task, "data": self.comparison.a.data, "metric": self.main_metric,
                    "metrics_before": self.comparison.a.metrics, "metrics_after": self.comparison.b.metrics,
                    "rows": self.comparison.a.n, "predictions_changed": len(self.comparison.disagreements)}
        return out


def split(concepts: Concepts, held_out: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Training and held-out texts, stratified by concept where each class has two texts or more."""
    from sklearn.model_selection import train_test_split

    indices = np.arange(len(concepts.texts))
    counts = np.bincount(concepts.labels)
    stratify = concepts.labels if counts.min() >= 2 else None
    try:
        train, test = train_test_split(indices, test_size=held_out, random_state=seed, stratify=stratify)
    except ValueError:  # too few texts for a stratified split of that size
        train, test = train_test_split(indices, test_size=held_out, random_state=seed)
    return np.sort(train), np.sort(test)


def erase_concept(loaded: LoadedModel, layer: Any, concept_file: str | Path, control: TaskControl,
                  dataset: Any = None, positions: str = "all", seed: int = SEED) -> Erasure:
    """Fit LEACE at `layer` on the concept file, probe before and after, and (with `dataset`, an
    evaluate.readers.Dataset) the task's metrics intact and erased."""
    from bertstudio.core import notes as _notes

    level = _states.check_layer(loaded, layer)
    check_positions(positions)
    concepts = read_concepts(concept_file, control)
    if len(concepts.texts) < 4:
        raise InputError(f"The concept file has {len(concepts.texts)} texts; at least 4 are needed to keep some "
                         "apart for the probe.")
    found = _states.collect(loaded, concepts.texts, level, control)
    if positions == "first":
        found = _states.first_tokens(found)
    token_labels = concepts.labels[found.text]
    train_texts, test_texts = split(concepts, HELD_OUT, seed)
    train_rows, test_rows = found.rows_of(train_texts), found.rows_of(test_texts)
    control.report("Fitting LEACE", None)
    eraser = fit_eraser(found.states[train_rows], token_labels[train_rows], len(concepts.classes))
    control.check()
    probe_rows = train_rows
    if len(probe_rows) > MAX_PROBE_TOKENS:
        probe_rows = np.sort(np.random.default_rng(seed).choice(train_rows, MAX_PROBE_TOKENS, replace=False))
    x_train, y_train = found.states[probe_rows], token_labels[probe_rows]
    x_test, y_test = found.states[test_rows], token_labels[test_rows]
    control.report("Training the probe on the states as they are", None)
    before = probe_accuracy(x_train, y_train, x_test, y_test, seed)
    control.check()
    control.report("Training the probe on the erased states", None)
    after = probe_accuracy(erase_states(eraser, x_train), y_train, erase_states(eraser, x_test), y_test, seed)
    majority_class = int(np.bincount(token_labels[train_rows], minlength=len(concepts.classes)).argmax())
    majority = float(np.mean(y_test == majority_class)) if len(y_test) else float("nan")
    found_notes: list[Note] = []
    if found.cut:
        found_notes.append(_notes.warning(f"{len(found.cut)} concept text(s) were longer than the model reads and "
                                          "were cut."))
    comparison = None
    if dataset is not None:
        comparison = metrics_with_erasure(loaded, dataset, level, eraser, control, positions)
    return Erasure(level, positions, concepts.classes, len(concepts.texts), len(found), int(len(test_rows)), before,
                   after, majority, eraser, comparison, tuple(found_notes))


def metrics_with_erasure(loaded: LoadedModel, dataset: Any, layer: int, eraser: Any, control: TaskControl,
                         positions: str = "all") -> Any:
    """The task's evaluation of `dataset` intact (a) and with the concept erased at `layer` (b)."""
    from dataclasses import replace

    from bertstudio.core import engine
    from bertstudio.core.evaluate.evaluation import compare, evaluate

    control.report("Scoring the data intact", None)
    intact = evaluate(loaded, dataset, control)
    control.report(f"Scoring the data with the concept erased at layer {layer}", None)
    with engine.holding(loaded), erasing(loaded, layer, eraser, positions):  # the hook for this job alone
        erased = evaluate(loaded, dataset, control)
    source = loaded.info.request.source
    return compare(replace(intact, model=source), replace(erased, model=f"{source} (concept erased at layer {layer})"))


def erase_job(request: LoadRequest, layer: int, concept_file: str, evaluation: Any, positions: str,
              control: TaskControl) -> Erasure:
    """The window's worker side (Evaluate's Erase page): the labelled file read (Evaluate's EvalRequest, or
    None), the model from the cache, then erase_concept."""
    from bertstudio.core.evaluate.readers import read_dataset
    from bertstudio.core.models import load_model

    read_concepts(concept_file, control)  # a bad concept file is said before the model loads
    dataset = None
    if evaluation is not None:
        dataset = read_dataset(request.task, evaluation.data, evaluation.columns, control).limited(evaluation.limit)
    loaded = load_model(request, control)
    control.check()
    return erase_concept(loaded, layer, concept_file, control, dataset, positions)
