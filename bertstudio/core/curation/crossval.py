"""k-fold cross-validation of a classifier (`train --cv K`): each fold is an ordinary training run
(core/training/engine.py, so every setting, event, stop and safe save applies) on the other folds'
rows; its model then scores its held-out rows through the batch engine. The result: per-fold and
mean +- sd metrics (scikit-learn's, from the held-out probabilities) and `oof.csv`, every training
row's out-of-fold probabilities, which `label-issues` reads.

Output folder: `oof.csv`, `cv.json` (metrics and every row's fold), and `folds/fold-N/` (the fold's
data and model, as a search keeps its trials)."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from bertstudio.core.curation import oof as oof_file
from bertstudio.core.curation.cv_card import write_cv_card
from bertstudio.core.curation.stratify import fold_assignments
from bertstudio.core.errors import InputError
from bertstudio.core.outputs import write_json
from bertstudio.core.progress import TaskControl
from bertstudio.core.training import saving
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.data import LabelledData, read_labelled

CV_TASKS = ("text-classification",)
OOF_NAME = "oof.csv"
Scored = tuple[np.ndarray, tuple[str, ...]]  # (rows, classes) probabilities and the class of each column
SUMMARY_NAME = "cv.json"


@dataclass(frozen=True)
class FoldResult:
    """One fold's held-out metrics; also the progress payload as each fold ends."""

    fold: int  # 0-based
    folds: int
    train_rows: int
    held_rows: int
    metrics: dict[str, float]
    model_dir: str

    def to_json(self) -> dict[str, Any]:
        return {"event": "fold", **asdict(self)}


@dataclass(frozen=True)
class CrossValidation:
    output_dir: str
    folds: tuple[FoldResult, ...]
    mean: dict[str, float]
    sd: dict[str, float]
    oof_file: str
    assignments: tuple[int, ...]  # every data row's fold: a second run on the same folds reuses it

    def to_json(self) -> dict[str, Any]:
        return {"event": "cv", "output_dir": self.output_dir, "k": len(self.folds),
                "folds": [fold.to_json() for fold in self.folds], "mean": self.mean, "sd": self.sd,
                "oof_file": self.oof_file}


def held_out_metrics(labels: list[str], probabilities: np.ndarray, classes: tuple[str, ...]) -> dict[str, float]:
    """Accuracy, macro F1 and log loss of one fold's held-out rows (scikit-learn's)."""
    from sklearn.metrics import accuracy_score, f1_score, log_loss

    index = {name: i for i, name in enumerate(classes)}
    gold = np.asarray([index[label] for label in labels])
    probabilities = probabilities / probabilities.sum(axis=1, keepdims=True)  # float32 softmax sums drift
    predicted = probabilities.argmax(axis=1)
    every = list(range(len(classes)))
    return {"accuracy": float(accuracy_score(gold, predicted)),
            "macro_f1": float(f1_score(gold, predicted, labels=every, average="macro", zero_division=0)),
            "log_loss": float(log_loss(gold, np.clip(probabilities, 1e-12, 1.0), labels=every))}


def multi_label_metrics(labels: list[str], probabilities: np.ndarray, classes: tuple[str, ...],
                        threshold: float = 0.5) -> dict[str, float]:
    """Micro, macro and samples F1 and subset accuracy of `a|b` rows at the threshold (scikit-learn's)."""
    from sklearn.metrics import accuracy_score, f1_score

    from bertstudio.core.curation.stratify import label_matrix

    gold = label_matrix([[n for n in label.split(oof_file.SEPARATOR) if n] for label in labels], classes)
    predicted = probabilities >= threshold
    scores = {f"{kind}_f1": float(f1_score(gold, predicted, average=kind, zero_division=0))
              for kind in ("micro", "macro", "samples")}
    return {**scores, "subset_accuracy": float(accuracy_score(gold, predicted))}


def summarise(folds: list[FoldResult]) -> tuple[dict[str, float], dict[str, float]]:
    """Mean and sample standard deviation (ddof 1) of each metric over the folds."""
    names = list(folds[0].metrics) if folds else []
    values = {name: np.asarray([fold.metrics[name] for fold in folds]) for name in names}
    return ({name: float(v.mean()) for name, v in values.items()},
            {name: float(v.std(ddof=1)) if len(v) > 1 else 0.0 for name, v in values.items()})


def cross_validate(config: TrainConfig, k: int, control: TaskControl | None = None,
                   stop_event: threading.Event | None = None,
                   assignments: np.ndarray | None = None) -> CrossValidation:
    """Train K models, each on K-1 folds, and score each on its held-out fold. `assignments` (each
    row's fold) repeats an earlier run's folds, e.g. on a corrected copy of the file. A multi-label
    run (config.multi_label): `a|b` cells, iterative stratification, multi-label heads and metrics."""
    control = control or TaskControl()
    config.validate()
    multi_label = config.multi_label
    if config.task not in CV_TASKS:
        raise InputError("--cv works with --task classify.", hint="Train other tasks without --cv.")
    data = read_labelled(config.train_file, config.columns, multi_label=config.multi_label)
    if assignments is None:
        folds = fold_assignments(data.labels, k, config.seed, multi_label)
    else:
        folds = np.asarray(assignments)
    if len(folds) != len(data):
        raise InputError(f"The saved folds cover {len(folds)} rows but the file has {len(data)}.")
    k = int(folds.max()) + 1
    output = _prepare_output(config)
    classes = class_names(data.labels, multi_label)
    probabilities = np.full((len(data), len(classes)), np.nan)
    results: list[FoldResult] = []
    for fold in range(k):
        control.check()
        control.report(f"Fold {fold + 1} of {k}: training on {int((folds != fold).sum()):,} rows…", fold / k)
        held = np.flatnonzero(folds == fold)
        fold_probabilities, model_dir = _run_fold(config, data, folds, fold, output, control, stop_event)
        probabilities[held] = fold_probabilities_in(fold_probabilities, model_dir, classes)
        score = multi_label_metrics if multi_label else held_out_metrics
        metrics = score([data.labels[i] for i in held], probabilities[held], classes)
        result = FoldResult(fold, k, len(data) - len(held), len(held), metrics, str(model_dir))
        results.append(result)
        control.report(f"Fold {fold + 1} of {k}: " + ", ".join(f"{n} {v:.4f}" for n, v in metrics.items()),
                       (fold + 1) / k, payload=result)
    mean, sd = summarise(results)
    oof_file.write_oof(output / OOF_NAME, data.labels, classes, probabilities)
    outcome = CrossValidation(str(output), tuple(results), mean, sd, str(output / OOF_NAME),
                              tuple(int(f) for f in folds))
    summary = {**outcome.to_json(), "assignments": list(outcome.assignments), "classes": list(classes)}
    write_json(output / SUMMARY_NAME, summary)
    write_cv_card(config, data, classes, outcome)
    return outcome


def class_names(labels: tuple[str, ...], multi_label: bool) -> tuple[str, ...]:
    """The classes in column order: every label, or every name in `a|b` cells."""
    if not multi_label:
        return tuple(sorted(set(labels)))
    return tuple(sorted({name for label in labels for name in label.split(oof_file.SEPARATOR) if name}))


def fold_probabilities_in(found: Scored, model_dir: Path,
                          classes: tuple[str, ...]) -> np.ndarray:
    """The fold model's probability columns in the data's class order (a fold may order them its way)."""
    values, names = found
    if set(names) != set(classes):
        raise InputError(f"The fold model in {model_dir} has the labels {', '.join(names)}, not the file's.")
    return values[:, [names.index(name) for name in classes]]


def _prepare_output(config: TrainConfig) -> Path:
    """A new (or, with --overwrite, an earlier run's) folder, marked as ours before anything goes in."""
    output = saving.check_output(config.output_dir, replace=config.overwrite)
    if output.is_dir() and any(output.iterdir()):
        saving.remove_ours(output)
    saving.write_marker(output, "cross-validation", config.task)
    return output


def _run_fold(config: TrainConfig, data: LabelledData, folds: np.ndarray, fold: int, output: Path,
              control: TaskControl, stop_event: threading.Event | None) -> tuple[Scored, Path]:
    """Train on every other fold, then score the held-out rows with the saved fold model."""
    from bertstudio.core.curation.probabilities import class_probabilities, load_classifier
    from bertstudio.core.training.engine import train

    folder = output / "folds" / f"fold-{fold + 1}"
    folder.mkdir(parents=True, exist_ok=True)
    train_rows, held_rows = np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)
    train_file = _write_rows(folder / "train.csv", data, train_rows)
    fold_config = replace(config, train_file=str(train_file), eval_file=None, eval_share=0.0, columns=data.columns,
                          output_dir=str(folder / "model"), overwrite=False, resume=False)
    result = train(fold_config, control, stop_event=stop_event)
    if result.stopped:
        raise InputError(f"Cross-validation stopped in fold {fold + 1}; no out-of-fold file was written.")
    loaded = load_classifier(result.output_dir, config.device, control)
    pairs = data.pairs
    rows = [(data.texts[i], pairs[i] if pairs is not None else None) for i in held_rows]
    return class_probabilities(loaded, rows, control), Path(result.output_dir)


def _write_rows(path: Path, data: LabelledData, rows: np.ndarray) -> Path:
    from bertstudio.core.suites.fix import write_atomically

    columns = data.columns
    header = [columns.text, *([columns.text_pair] if columns.text_pair else []), columns.label]
    pairs = data.pairs
    records = [[data.texts[i], *([pairs[i]] if pairs is not None else []), data.labels[i]] for i in rows]
    write_atomically(path, [h for h in header if h], records)
    return path
