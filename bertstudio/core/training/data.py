"""Reading training data: every malformed row is reported with its line number before training.

Here: the row issues every reader reports, the labelled table (CSV/TSV/JSONL rows of one text or a
pair and a label) that classification, regression, distillation and the suites' labelled failures
share, the label bound, splits and token lengths. A format only one task reads lives in its package
(NER's CoNLL: core/tasks/ner/conll.py; pre-training's corpus: core/tasks/pretraining/corpus.py).
Nothing is dropped silently: a bad row stops the run with a message that names the line.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, field
from pathlib import Path

from bertstudio.core.datafiles import TableRow, read_table, tick
from bertstudio.core.errors import InputError
from bertstudio.core.json_values import text_number
from bertstudio.core.progress import TaskControl
from bertstudio.core.training.options import opt

TEXT_NAMES = ("text", "sentence", "sentence1", "text_a", "review", "content", "document", "question")
PAIR_NAMES = ("text_pair", "sentence2", "text_b", "pair", "context", "hypothesis")
LABEL_NAMES = ("label", "labels", "class", "category", "target", "sentiment", "y")
MAX_ISSUES_SHOWN = 8


@dataclass(frozen=True)
class RowIssue:
    line: int
    problem: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.problem}"


def raise_issues(path: Path, issues: Sequence[RowIssue]) -> None:
    """One InputError naming the first few bad lines; the full list goes in details."""
    if not issues:
        return
    shown = "; ".join(str(i) for i in issues[:MAX_ISSUES_SHOWN])
    more = f" (+{len(issues) - MAX_ISSUES_SHOWN} more)" if len(issues) > MAX_ISSUES_SHOWN else ""
    raise InputError(
        f"{path.name} has {len(issues)} malformed row(s): {shown}{more}.",
        hint="Fix these lines and start again; no row is skipped silently.",
        details="\n".join(str(i) for i in issues),
    )


# -- text classification ----------------------------------------------------------------------
@dataclass(frozen=True)
class Columns:
    """Which columns hold the text, the optional second text, and the label."""

    text: str = opt(MISSING, flag="--text-column", label="Text",
                    help="classification, regression: column with the text (default: detected)")
    label: str = opt(MISSING, flag="--label-column", label="Label",
                     help="classification: column with the label, regression: with the score "
                     "(default: detected)")
    text_pair: str | None = opt(None, flag="--pair-column", label="Second text",
                                help="classification: column with a second text")


@dataclass(frozen=True)
class LabelledData:
    texts: tuple[str, ...]
    pairs: tuple[str, ...] | None
    labels: tuple[str, ...]
    lines: tuple[int, ...]  # the line each example came from, for messages
    columns: Columns
    merged_labels: tuple[str, ...] = ()  # numeric spellings normalised ('1.0' became '1')
    multi_label: bool = False  # each label cell is `a|b` (or empty): several labels per row

    def __len__(self) -> int:
        return len(self.texts)

    def subset(self, indices: Sequence[int]) -> LabelledData:
        return LabelledData(
            tuple(self.texts[i] for i in indices),
            tuple(self.pairs[i] for i in indices) if self.pairs is not None else None,
            tuple(self.labels[i] for i in indices),
            tuple(self.lines[i] for i in indices),
            self.columns,
            self.merged_labels,
            self.multi_label,
        )


def detect_columns(header: Sequence[str]) -> Columns:
    """A first guess the user confirms: well-known names, else first column text and last label."""
    lower = {h.lower(): h for h in header}
    if len(header) < 2:
        raise InputError("A classification file needs at least two columns: a text and a label.")
    label = next((lower[n] for n in LABEL_NAMES if n in lower), header[-1])
    text = next((lower[n] for n in TEXT_NAMES if n in lower and lower[n] != label), None)
    text = text or next(h for h in header if h != label)
    pair = next((lower[n] for n in PAIR_NAMES if n in lower and lower[n] not in (text, label)), None)
    return Columns(text=text, label=label, text_pair=pair)


def file_columns(path: str | Path) -> tuple[list[str], Columns]:
    """The columns of a table file and the detected roles (for the UI to confirm)."""
    header, _rows = read_table(path)
    return header, detect_columns(header)


def read_labelled(path: str | Path, columns: Columns | None = None, multi_label: bool = False,
                  empty_labels: bool = False) -> LabelledData:
    """Every row of a CSV/TSV/JSONL file checked: a text (and pair) and a label, or its line is reported.
    `multi_label`: a cell holds several labels separated by `|` and an empty one is a row with no label
    (core/tasks/classification/multilabel.py reads the cells)."""
    path = Path(path)
    header, rows = read_table(path)
    return labelled_rows(path, header, rows, columns, multi_label=multi_label, empty_labels=empty_labels)


def labelled_rows(path: Path, header: Sequence[str], rows: Sequence[TableRow],
                  columns: Columns | None = None, control: TaskControl | None = None,
                  multi_label: bool = False, empty_labels: bool = False) -> LabelledData:
    """`read_labelled` on a table already read (evaluation reads a file once, before it knows whether the
    model is multi-label: `empty_labels` keeps an empty cell for the model's own check)."""
    columns = columns or detect_columns(header)
    for name in (columns.text, columns.label, columns.text_pair):
        if name is not None and name not in header:
            raise InputError(f"{path.name} has no column '{name}'.", hint=f"Its columns: {', '.join(header)}.")
    issues: list[RowIssue] = []
    texts, pairs, labels, lines = [], [], [], []
    for count, (number, row, problem) in enumerate(rows):
        tick(control, count)
        if row is None:
            issues.append(RowIssue(number, problem))
            continue
        text = str(row.get(columns.text) or "").strip()
        label = row.get(columns.label)
        label = "" if label is None else str(label).strip()
        pair = str(row.get(columns.text_pair) or "").strip() if columns.text_pair else None
        if not text:
            issues.append(RowIssue(number, f"empty text in column '{columns.text}'"))
        elif not label and not (multi_label or empty_labels):
            issues.append(RowIssue(number, f"empty label in column '{columns.label}'"))
        elif columns.text_pair and not pair:
            issues.append(RowIssue(number, f"empty second text in column '{columns.text_pair}'"))
        else:
            texts.append(text)
            labels.append(label)
            pairs.append(pair or "")
            lines.append(number)
    raise_issues(path, issues)
    if not texts:
        raise InputError(f"{path.name} has no examples.", hint="Add rows under the header.")
    labels, merged = normalise_labels(labels) if not multi_label else (labels, ())
    return LabelledData(
        tuple(texts), tuple(pairs) if columns.text_pair else None, tuple(labels), tuple(lines), columns, merged,
        multi_label,
    )


def normalise_labels(labels: Sequence[str]) -> tuple[list[str], tuple[str, ...]]:
    """Numeric labels written differently ('1', '1.0', '01') are one class, not three.

    Only when every label is a number: then each becomes its canonical form ('1', '0.5').
    Returns the labels and the spellings that were merged, for the plan message.
    """
    numbers = [text_number(label) for label in labels]
    if not labels or any(n is None for n in numbers):
        return list(labels), ()
    canonical = [str(int(n)) if float(n).is_integer() else repr(float(n)) for n in numbers if n is not None]
    merged = sorted({raw for raw, canon in zip(labels, canonical, strict=True) if raw != canon})
    return canonical, tuple(merged)


# -- labels ----------------------------------------------------------------------------------------
def check_label_count(path: str | Path, labels: Sequence[str]) -> None:
    """The classes become the head's rows: bounded before the head is allocated, at the most a model
    folder may have (model_folder.MAX_LABELS), so every trained model opens again."""
    from bertstudio.core.model_folder import MAX_LABELS

    if len(labels) > MAX_LABELS:
        raise InputError(f"{Path(path).name} has {len(labels):,} different labels; a classifier head holds at most "
                         f"{MAX_LABELS:,}.", hint="Check the label column (is it the text?), or merge rare labels.")


# -- splits and lengths --------------------------------------------------------------------------
def split_indices(count: int, share: float, seed: int) -> tuple[list[int], list[int]]:
    """Train and held-out indices; the held-out share is at least one example when asked for."""
    order = list(range(count))
    random.Random(seed).shuffle(order)
    held = 0 if share <= 0 else min(count - 1, max(1, round(count * share)))
    return sorted(order[held:]), sorted(order[:held])


@dataclass(frozen=True)
class LengthSummary:
    """Token lengths of the training examples and how many the maximum length cuts."""

    count: int
    mean: float
    median: float
    p95: int
    longest: int
    max_length: int
    truncated: int
    histogram: tuple[int, ...] = field(default=())

    @property
    def message(self) -> str:
        cut = (
            f"{self.truncated} of {self.count} examples are longer than {self.max_length} tokens and will be truncated."
            if self.truncated else f"No example is longer than {self.max_length} tokens."
        )
        return (f"Token lengths: mean {self.mean:.1f}, median {self.median:.0f}, 95th percentile {self.p95}, "
                f"longest {self.longest}. {cut}")


def length_summary(lengths: Sequence[int], max_length: int) -> LengthSummary:
    values = sorted(lengths)
    if not values:
        return LengthSummary(0, 0.0, 0.0, 0, 0, max_length, 0)
    p95 = values[min(len(values) - 1, math.ceil(0.95 * len(values)) - 1)]
    return LengthSummary(
        count=len(values), mean=statistics.fmean(values), median=float(statistics.median(values)), p95=p95,
        longest=values[-1], max_length=max_length, truncated=sum(v > max_length for v in values),
    )
