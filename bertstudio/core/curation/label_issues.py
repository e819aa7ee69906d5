"""Rows whose given label looks wrong, by cleanlab's confident learning on out-of-fold probabilities:
exactly `cleanlab.filter.find_label_issues(labels, pred_probs, return_indices_ranked_by=
"self_confidence")` (with `multi_label=True` for `a|b` labels), in cleanlab's order, each with the
label the model suggests and the given label's self-confidence."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bertstudio.core.curation.oof import SEPARATOR, OutOfFold, check_matches, read_oof
from bertstudio.core.errors import InputError


@dataclass(frozen=True)
class LabelIssue:
    row: int  # 0-based data row (the OOF file's `row`)
    given: str
    suggested: str
    self_confidence: float  # the given label's probability (multi-label: cleanlab's label quality score)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def find_issues(given: Sequence[str], probabilities: np.ndarray, classes: Sequence[str],
                multi_label: bool = False) -> list[LabelIssue]:
    """cleanlab's flagged rows, ranked by self-confidence (least confident first)."""
    if multi_label:
        return _multi_label_issues(given, probabilities, classes)
    from cleanlab.filter import find_label_issues
    from cleanlab.rank import get_self_confidence_for_each_label

    index = {name: i for i, name in enumerate(classes)}
    labels = np.asarray([index[label] for label in given], dtype=np.int64)
    probs = _normalised(probabilities)
    flagged = find_label_issues(labels, probs, return_indices_ranked_by="self_confidence")
    confidence = get_self_confidence_for_each_label(labels, probs)
    return [LabelIssue(int(row), given[row], classes[int(probs[row].argmax())], float(confidence[row]))
            for row in flagged]


def _multi_label_issues(given: Sequence[str], probabilities: np.ndarray, classes: Sequence[str]) -> list[LabelIssue]:
    """multi_label=True: labels are lists of class indices; the suggestion is every class at p >= 0.5."""
    from cleanlab.filter import find_label_issues
    from cleanlab.multilabel_classification.rank import get_label_quality_scores

    index = {name: i for i, name in enumerate(classes)}
    labels = [[index[name] for name in label.split(SEPARATOR) if name] for label in given]
    probs = np.asarray(probabilities, dtype=np.float64)
    with warnings.catch_warnings():  # cleanlab 2.9 points to multilabel_classification.filter, which this calls
        warnings.simplefilter("ignore", DeprecationWarning)
        flagged = find_label_issues(labels, probs, multi_label=True, return_indices_ranked_by="self_confidence")
    quality = get_label_quality_scores(labels, probs)
    return [LabelIssue(int(row), given[row], SEPARATOR.join(classes[int(j)] for j in np.flatnonzero(probs[row] >= 0.5)),
                       float(quality[row])) for row in flagged]


def _normalised(probabilities: np.ndarray) -> np.ndarray:
    """Rows that sum to 1 (a file rounds to 6 digits; cleanlab checks the sums)."""
    probs = np.asarray(probabilities, dtype=np.float64)
    sums = probs.sum(axis=1, keepdims=True)
    if np.any(np.abs(sums - 1.0) > 1e-3):
        row = int(np.flatnonzero(np.abs(sums[:, 0] - 1.0) > 1e-3)[0])
        raise InputError(f"Row {row}'s probabilities add up to {sums[row, 0]:.4f}, not 1.",
                         hint="Single-label probabilities must sum to 1 (or pass --multi-label).")
    return probs / sums


def issues_in_files(data_path: str | Path, oof_path: str | Path, label_column: str | None = None,
                    text_column: str | None = None, multi_label: bool = False) -> tuple[list[LabelIssue], OutOfFold]:
    """The data file and its OOF file checked against each other, then cleanlab's issues."""
    from bertstudio.core.training.data import Columns, file_columns, read_labelled

    columns = None
    if label_column or text_column:
        guess = file_columns(data_path)[1]
        columns = Columns(text=text_column or guess.text, label=label_column or guess.label,
                          text_pair=guess.text_pair)
    data = read_labelled(data_path, columns)
    oof = read_oof(oof_path)
    check_matches(oof, data.labels, Path(data_path).name, Path(oof_path).name)
    if not multi_label and len(set(data.labels)) < 2:
        raise InputError("Label issues need at least two different labels.")
    return find_issues(data.labels, oof.probabilities, oof.classes, multi_label), oof
