"""Multi-label classification: a label cell holds several labels separated by `|` (`sports|finance`;
empty = none). Here: reading such cells into a binary matrix (scikit-learn's MultiLabelBinarizer)
and the label names, the checks a training file must pass, and the metrics at a threshold, each
scikit-learn's on the binarized matrix. Training (train.py), Evaluate (evaluate_multilabel.py),
cross-validation and label issues all read the cells through `binarize` / `read_label_matrix`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bertstudio.core.errors import InputError

if TYPE_CHECKING:
    import numpy as np

    from bertstudio.core.evaluate.metrics import ClassScores
    from bertstudio.core.training.data import Columns

SEPARATOR = "|"
PROBLEM_TYPE = "multi_label_classification"  # transformers: sigmoid per label and BCEWithLogitsLoss
DEFAULT_THRESHOLD = 0.5
METRIC_NAMES = ("micro_f1", "macro_f1", "samples_f1", "subset_accuracy", "hamming_loss")


class LabelSet(frozenset):  # type: ignore[type-arg]
    """One row's labels (a gold cell or a prediction); reads as the cell it came from (`a|b`)."""

    def __str__(self) -> str:
        return SEPARATOR.join(sorted(self))

    def __repr__(self) -> str:
        return f"LabelSet({str(self)!r})"


def split_labels(cell: str) -> LabelSet:
    """`sports| finance` -> {sports, finance}; an empty cell is a row with no label."""
    return LabelSet(part.strip() for part in str(cell).split(SEPARATOR) if part.strip())


def has_separator(cells: Iterable[str]) -> bool:
    """Whether any label cell holds several labels: the Train form then proposes multi-label."""
    return any(SEPARATOR in str(cell) for cell in cells)


def label_names(cells: Iterable[str]) -> list[str]:
    """Every label that occurs in the cells, sorted (the head's label order)."""
    return sorted({label for cell in cells for label in split_labels(cell)})


def binarize(cells: Sequence[str], names: Sequence[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """(rows x labels) 0/1 int matrix and the label names (its column order; sorted when not given).
    A label not among `names` is an InputError naming it."""
    import warnings

    from sklearn.preprocessing import MultiLabelBinarizer

    sets = [split_labels(cell) for cell in cells]
    names = list(names) if names is not None else label_names(cells)
    unknown = sorted({label for labels in sets for label in labels} - set(names))
    if unknown:
        raise InputError(f"The label(s) {', '.join(repr(u) for u in unknown[:5])} are not among the model's "
                         f"labels ({', '.join(names)}).", hint="Relabel the file or choose the matching model.")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="unknown class")
        matrix = MultiLabelBinarizer(classes=names).fit_transform(sets)
    return matrix.astype("int64"), names


def read_label_matrix(path: str | Path, columns: Columns | None = None) -> tuple[np.ndarray, list[str]]:
    """A multi-label table file's label column as a binary matrix and its label names (rows in file
    order, as `training.data.read_labelled(path, columns, multi_label=True)` reads them)."""
    from bertstudio.core.training.data import read_labelled

    data = read_labelled(path, columns, multi_label=True)
    return binarize(data.labels)


def label_counts(cells: Iterable[str], multi_label: bool) -> Counter[str]:
    """How many rows carry each label (a multi-label row counts for each of its labels)."""
    if multi_label:
        return Counter(label for cell in cells for label in split_labels(cell))
    return Counter(str(cell) for cell in cells if str(cell))


def refuse_separator(path: str | Path, cells: Sequence[str], lines: Sequence[int]) -> None:
    """A single-label run on a file whose labels hold `|`: one line saying to train it as multi-label."""
    found = next(((cell, line) for cell, line in zip(cells, lines, strict=True) if SEPARATOR in cell), None)
    if found is not None:
        raise InputError(f"{Path(path).name} line {found[1]}: the label '{found[0]}' holds several labels "
                         f"(separated by '{SEPARATOR}'); add --multi-label (the Train form's Multi-label box) "
                         "to train a multi-label classifier.")


def single_examples(counts: Mapping[str, int]) -> list[str]:
    """The labels on one row only, sorted."""
    return sorted(label for label, count in counts.items() if count < 2)


def refuse_single_examples(path: str | Path, once: Sequence[str]) -> None:
    """A label on one row only can neither be learned as a label set nor weighted: refused, naming it
    (a multi-label run, class weights or the focal loss; a plain single-label run gets a plan note)."""
    if once:
        shown = ", ".join(repr(label) for label in once[:5]) + (f" (+{len(once) - 5} more)" if len(once) > 5 else "")
        raise InputError(f"{Path(path).name}: the label(s) {shown} appear on only one row; every label needs at "
                         "least two examples.", hint="Add examples of it, merge it into another label, or remove it.")


def predicted_matrix(probabilities: Any, thresholds: float | Sequence[float] = DEFAULT_THRESHOLD) -> np.ndarray:
    """0/1 predictions: a label is on where its sigmoid probability is >= its threshold."""
    import numpy as np

    values = np.asarray(probabilities, dtype=np.float64)
    cut = np.broadcast_to(np.asarray(thresholds, dtype=np.float64), values.shape[1:])
    return (values >= cut).astype("int64")


def multilabel_scores(gold: Any, predicted: Any) -> dict[str, float]:
    """micro/macro/samples F1, subset accuracy and Hamming loss: scikit-learn's, on 0/1 matrices."""
    from sklearn.metrics import accuracy_score, f1_score, hamming_loss

    return {
        "micro_f1": float(f1_score(gold, predicted, average="micro", zero_division=0)),
        "macro_f1": float(f1_score(gold, predicted, average="macro", zero_division=0)),
        "samples_f1": float(f1_score(gold, predicted, average="samples", zero_division=0)),
        "subset_accuracy": float(accuracy_score(gold, predicted)),
        "hamming_loss": float(hamming_loss(gold, predicted)),
    }


def per_label_scores(gold: Any, predicted: Any, names: Sequence[str]) -> dict[str, ClassScores]:
    """Each label's precision, recall, F1 and support (scikit-learn, one column each)."""
    from sklearn.metrics import precision_recall_fscore_support

    from bertstudio.core.evaluate.metrics import ClassScores

    precision, recall, f1, support = precision_recall_fscore_support(gold, predicted, average=None, zero_division=0)
    return {name: ClassScores(float(p), float(r), float(f), int(s))
            for name, p, r, f, s in zip(names, precision, recall, f1, support, strict=True)}


def sigmoid(logits: Any) -> np.ndarray:
    import numpy as np

    values = np.asarray(logits, dtype=np.float64)
    return 1.0 / (1.0 + np.exp(-values))


def training_metrics(pred: Any) -> dict[str, float]:
    """Trainer's compute_metrics for a multi-label head: the logits kept whole, sigmoid >= 0.5."""
    import numpy as np

    logits = pred.predictions[0] if isinstance(pred.predictions, tuple) else pred.predictions
    gold = (np.asarray(pred.label_ids) >= 0.5).astype("int64")
    return multilabel_scores(gold, predicted_matrix(sigmoid(logits)))
