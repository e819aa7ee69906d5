"""Seeded, stratified k-fold assignments: every fold keeps each class's share of the rows.

Single-label: scikit-learn's StratifiedKFold. Multi-label (a binary row x label matrix): iterative
stratification (Sechidis, Tsoumakas and Vlahavas, ECML-PKDD 2011), written here because
scikit-multilearn is an unmaintained, heavy dependency for these ~40 lines.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bertstudio.core.errors import InputError

MAX_FOLDS = 100


def check_folds(k: int, labels: Sequence[str]) -> None:
    """K must be at least 2 and at most the rows of the smallest class (else a fold lacks that class)."""
    if k < 2:
        raise InputError(f"--cv takes 2 folds or more, not {k}.", hint="Try --cv 5.")
    if k > MAX_FOLDS:
        raise InputError(f"--cv takes at most {MAX_FOLDS} folds, not {k}.")
    values, counts = np.unique(np.asarray(labels, dtype=object), return_counts=True)
    smallest = int(counts.argmin())
    if k > counts[smallest]:
        raise InputError(f"{k} folds need at least {k} rows of every class, but '{values[smallest]}' has "
                         f"{counts[smallest]}.", hint=f"Choose --cv {max(2, int(counts[smallest]))} or less, "
                                                      "or add rows of that class.")


def stratified_folds(labels: Sequence[str], k: int, seed: int) -> np.ndarray:
    """The fold (0..k-1) of every row, single-label: StratifiedKFold, shuffled with `seed`."""
    from sklearn.model_selection import StratifiedKFold

    check_folds(k, labels)
    folds = np.full(len(labels), -1, dtype=np.int64)
    splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    for fold, (_train, held) in enumerate(splitter.split(np.zeros(len(labels)), np.asarray(labels, dtype=object))):
        folds[held] = fold
    return folds


def iterative_folds(matrix: np.ndarray, k: int, seed: int) -> np.ndarray:
    """The fold of every row of a binary (rows, labels) matrix by iterative stratification: the rarest
    label's rows are dealt first, each to the fold that still wants most of that label (ties: the fold
    that wants most rows, then chance); rows with no label fill the folds' remaining wants last."""
    y = np.asarray(matrix, dtype=bool)
    rows = len(y)
    if k < 2 or k > rows:
        raise InputError(f"{k} folds need 2 or more folds and at most one per row ({rows} rows).")
    rng = np.random.default_rng(seed)
    wanted_rows = np.full(k, rows / k)
    wanted_labels = np.outer(np.full(k, 1.0 / k), y.sum(axis=0))
    folds = np.full(rows, -1, dtype=np.int64)
    left = np.ones(rows, dtype=bool)
    while (left[:, None] & y).any():
        counts = (y & left[:, None]).sum(axis=0).astype(float)
        counts[counts == 0] = np.inf
        rarest = rng.choice(np.flatnonzero(counts == counts.min()))
        for row in rng.permutation(np.flatnonzero(left & y[:, rarest])):
            fold = _best_fold(wanted_labels[:, rarest], wanted_rows, rng)
            folds[row], left[row] = fold, False
            wanted_labels[fold] -= y[row]
            wanted_rows[fold] -= 1
    for row in rng.permutation(np.flatnonzero(left)):
        fold = _best_fold(wanted_rows, wanted_rows, rng)
        folds[row] = fold
        wanted_rows[fold] -= 1
    return folds


def _best_fold(wanted: np.ndarray, wanted_rows: np.ndarray, rng: np.random.Generator) -> int:
    """The fold wanting most; ties go to the one wanting most rows, then to chance."""
    tied = np.flatnonzero(wanted == wanted.max())
    if len(tied) > 1:
        tied = tied[wanted_rows[tied] == wanted_rows[tied].max()]
    return int(rng.choice(tied))


def label_matrix(labels: Sequence[Sequence[str]], classes: Sequence[str]) -> np.ndarray:
    """The binary (rows, classes) matrix of multi-label rows (each a list of its labels)."""
    index = {name: i for i, name in enumerate(classes)}
    out = np.zeros((len(labels), len(classes)), dtype=bool)
    for row, names in enumerate(labels):
        out[row, [index[name] for name in names]] = True
    return out


def fold_assignments(labels: Sequence[str], k: int, seed: int, multi_label: bool = False,
                     separator: str = "|") -> np.ndarray:
    """Folds for a label column: stratified for single labels, iterative for `a|b` multi-label cells."""
    if not multi_label:
        return stratified_folds(labels, k, seed)
    if k < 2:
        raise InputError(f"--cv takes 2 folds or more, not {k}.", hint="Try --cv 5.")
    split = [[part for part in label.split(separator) if part] for label in labels]
    classes = sorted({name for names in split for name in names})
    return iterative_folds(label_matrix(split, classes), k, seed)
