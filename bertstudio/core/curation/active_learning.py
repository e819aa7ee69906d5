"""Which unlabelled rows to label next (uncertainty sampling): the pool scored by the model through
the batch engine, each row's uncertainty by a strategy, the N most uncertain returned.

Scores (higher = more uncertain = label first): entropy = -sum p ln p; margin = 1 - (p1 - p2),
the two most probable classes; least-confidence = 1 - p1. A multi-label head's sigmoid outputs
are scored per label as yes/no and averaged. Ties keep the pool's order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bertstudio.core.errors import InputError
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.classification.spec import SPEC as CLASSIFICATION  # curation is for classifiers

STRATEGIES = ("entropy", "margin", "least-confidence")


@dataclass(frozen=True)
class Chosen:
    row: int  # 0-based data row of the pool file
    score: float
    text: str
    predicted: str  # the model's top label: a starting point for whoever labels it

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def uncertainty(probabilities: np.ndarray, strategy: str, multi_label: bool = False) -> np.ndarray:
    """One score per row (see the module docstring)."""
    if strategy not in STRATEGIES:
        raise InputError(f"Unknown strategy '{strategy}'.", hint=f"Choose one of {', '.join(STRATEGIES)}.")
    probs = np.asarray(probabilities, dtype=np.float64)
    if multi_label:  # each label a yes/no question: (rows, labels, 2)
        pairs = np.stack([probs, 1.0 - probs], axis=-1)
        return np.stack([uncertainty(pairs[:, j], strategy) for j in range(probs.shape[1])], axis=1).mean(axis=1)
    ordered = np.sort(probs, axis=1)[:, ::-1]
    if strategy == "entropy":
        return -np.sum(probs * np.log(np.clip(probs, 1e-300, 1.0)), axis=1)
    if strategy == "margin":
        return 1.0 - (ordered[:, 0] - ordered[:, 1])
    return 1.0 - ordered[:, 0]


def most_uncertain(scores: np.ndarray, count: int) -> np.ndarray:
    """The rows of the `count` highest scores, highest first; ties in row order."""
    return np.argsort(-np.asarray(scores), kind="stable")[:count]


def pool_rows(path: str | Path, text_column: str | None = None) -> tuple[list[str], str]:
    """Every row's text in a pool file (its label column, if any, is ignored) and the text column."""
    from bertstudio.core.datafiles import read_table
    from bertstudio.core.training.data import TEXT_NAMES, RowIssue, raise_issues

    path = Path(path)
    header, table = read_table(path, what="pool file")
    lower = {h.lower(): h for h in header}
    column = text_column or next((lower[n] for n in TEXT_NAMES if n in lower), header[0] if header else "")
    if column not in header:
        raise InputError(f"{path.name} has no column '{column}'.", hint=f"Its columns: {', '.join(header)}.")
    texts, issues = [], []
    for line, record, problem in table:
        text = "" if record is None else str(record.get(column) or "").strip()
        if record is None or not text:
            issues.append(RowIssue(line, problem or f"empty text in column '{column}'"))
        texts.append(text)
    raise_issues(path, issues)
    if not texts:
        raise InputError(f"{path.name} has no rows.", hint="Add unlabelled texts under the header.")
    return texts, column


def select(model: str, pool: str | Path, count: int, strategy: str, device: str = "cpu",
           text_column: str | None = None, control: TaskControl | None = None) -> list[Chosen]:
    """The `count` pool rows the model is least sure of, most uncertain first."""
    from bertstudio.core.curation.probabilities import class_probabilities
    from bertstudio.core.limits import MAX_ROWS, check_count
    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.tasks.classification.steps import score_kind

    check_count(count, "--count", 1, MAX_ROWS)
    if strategy not in STRATEGIES:
        raise InputError(f"Unknown strategy '{strategy}'.", hint=f"Choose one of {', '.join(STRATEGIES)}.")
    texts, _column = pool_rows(pool, text_column)
    loaded = load_model(LoadRequest(model, CLASSIFICATION.key, device), control)
    probabilities, classes = class_probabilities(loaded, [(text, None) for text in texts], control)
    multi = score_kind(loaded.model.config) == "multi-label"
    scores = uncertainty(probabilities, strategy, multi)
    return [Chosen(int(row), float(scores[row]), texts[row], _predicted(probabilities[row], classes, multi))
            for row in most_uncertain(scores, count)]


def _predicted(row: np.ndarray, classes: Sequence[str], multi_label: bool) -> str:
    if multi_label:
        return "|".join(name for name, p in zip(classes, row, strict=True) if p >= 0.5)
    return classes[int(row.argmax())]
